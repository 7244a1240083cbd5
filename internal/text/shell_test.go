package text

import "testing"

// ShellLine quotes what a shell would not read as the word it is: a
// first word that is a reserved word or an assignment (a later one is an
// argument like any other), and every word ShellQuote quotes.
func TestShellLine(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"python", "build.py", "--out", "a b.engine"}, "python build.py --out 'a b.engine'"},
		{[]string{"if", "x"}, "'if' x"},
		{[]string{"A=1", "A=1", "if"}, "'A=1' A=1 if"},
		{[]string{"it's", "", "$HOME", "~/x", "#1"}, `'it'\''s' '' '$HOME' '~/x' '#1'`},
		{[]string{"yolo", "model=yolo11n.pt"}, "yolo model=yolo11n.pt"},
	} {
		if got := ShellLine(c.argv); got != c.want {
			t.Errorf("ShellLine(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}

func TestIsEnvName(t *testing.T) {
	for name, want := range map[string]bool{"A": true, "_a1": true, "PATH": true, "": false, "1A": false, "A-B": false, "A B": false, "É": false, "A=": false} {
		if IsEnvName(name) != want {
			t.Errorf("IsEnvName(%q) = %v, want %v", name, !want, want)
		}
	}
}
