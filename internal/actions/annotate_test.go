package actions

import (
	"slices"
	"strings"
	"testing"
)

func TestAnnotationEscaping(t *testing.T) {
	for _, c := range []struct {
		level, title, msg, file string
		line                    int
		want                    string
	}{
		{"error", "Build failed", "out of memory", "", 0, "::error title=Build failed::out of memory"},
		{"warning", "a:b,c", "50% done\nnext\r", "m.yaml", 7, "::warning file=m.yaml,line=7,title=a%3Ab%2Cc::50%25 done%0Anext%0A"},
		{"notice", "", "x::error::y", "", 0, "::notice::x::error::y"},
		{"error", "t", "::error::y", "", 0, "::error title=t:::\u200d:error::y"},
		{"error", "##[x]", "a ##[error]b\n::warning::c", "", 0, "::error title=#\u200d#[x]::a #\u200d#[error]b%0A:\u200d:warning::c"},
		{"fatal", "", "m", "", 0, "::notice::m"},
	} {
		if got := Annotation(c.level, c.title, c.msg, c.file, c.line); got != c.want {
			t.Errorf("Annotation(%q, %q, %q, %q, %d)\n got %q\nwant %q", c.level, c.title, c.msg, c.file, c.line, got, c.want)
		}
	}
}

func TestAnnotationCutsLongMessages(t *testing.T) {
	got := Annotation("error", "", strings.Repeat("é", 5000), "", 0)
	msg := strings.TrimPrefix(got, "::error::")
	if n := len([]rune(msg)); n != maxMessage {
		t.Fatalf("message has %d runes, want %d", n, maxMessage)
	}
}

func TestBudgetKeepsWorstFirstWithinCaps(t *testing.T) {
	var notes []Note
	add := func(level string, n int) {
		for i := range n {
			notes = append(notes, Note{Level: level, Message: level + string(rune('a'+i))})
		}
	}
	add(LevelNotice, 7)
	add(LevelWarning, 3)
	add(LevelError, 12)
	add("odd", 1) // counts as a notice

	b := NewBudget(0) // default 5
	kept := b.Take(notes)
	var got []string
	for _, n := range kept {
		got = append(got, n.Message)
	}
	want := []string{"errora", "errorb", "errorc", "errord", "errore",
		"warninga", "warningb", "warningc",
		"noticea", "noticeb", "noticec", "noticed", "noticee"}
	if !slices.Equal(got, want) {
		t.Fatalf("kept %q\nwant %q", got, want)
	}
	if b.Dropped() != 7+0+2+1 {
		t.Errorf("Dropped() = %d, want 10", b.Dropped())
	}
	if more := b.Take([]Note{{Level: LevelWarning}, {Level: LevelWarning}, {Level: LevelWarning}}); len(more) != 2 {
		t.Errorf("second Take kept %d warnings, want the 2 left", len(more))
	}
	if b.left(LevelWarning) != 0 || b.Dropped() != 11 {
		t.Errorf("Left = %d, Dropped = %d; want 0 and 11", b.left(LevelWarning), b.Dropped())
	}
}
