package remote

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// A URL that names no store is a *URLError saying every problem it has and
// the forms a store's URL takes, never with a credential it held.
func TestOpenRefusesBadURLs(t *testing.T) {
	cases := []struct {
		url  string
		want []string
	}{
		{"ftp://host/repo", []string{`unknown scheme "ftp"`}},
		{"ghcr.io/team/cache", []string{"no scheme"}},
		{"oci:ghcr.io/team/cache", []string{"no host after oci://"}},
		{"oci://ghcr.io", []string{"no REPOSITORY after the host"}},
		{"oci://ghcr.io/Team/Cache?x=1", []string{`REPOSITORY "Team/Cache"`, "takes no query"}},
		{"oci://ghcr.io:99999/team", []string{`"ghcr.io:99999" is not a registry's HOST[:PORT]`}},
		{"oci://user:hunter2@ghcr.io/team/cache", []string{"credentials do not belong in the URL"}},
		{"oci://ghcr.io/team/cache#x", []string{"fragment"}},
		{"s3://B/a//b?region=US&token=hunter2", []string{`"B" is not a bucket's name`, `PREFIX "a//b"`,
			"endpoint=URL and region=R", `region "US"`}},
		{"s3://bucket?endpoint=ftp://host", []string{`endpoint "ftp://host" is not an http:// or https:// URL`}},
		{"s3://bucket?endpoint=https://k:hunter2@host", []string{`endpoint "https://host" has credentials`}},
		{"s3://bucket:9000/p", []string{`"bucket:9000" is not a bucket's name`}},
		{"s3://bucket?region=a&region=b", []string{"each once"}},
	}
	for _, c := range cases {
		_, err := Open(context.Background(), c.url, Options{Getenv: remotetest.Env{}.Getenv})
		var bad *URLError
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v; want a *URLError", c.url, err)
			continue
		}
		msg := err.Error()
		for _, w := range append(c.want, "oci://HOST[:PORT]/REPOSITORY or s3://BUCKET[/PREFIX][?endpoint=URL&region=R]") {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %s\n  does not say %q", c.url, msg, w)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("%s: the message holds the password: %s", c.url, msg)
		}
	}
}

// Good URLs open (no request is sent), and Location is the URL as given.
func TestOpenTakesGoodURLs(t *testing.T) {
	env := remotetest.Env{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_EC2_METADATA_DISABLED": "true"}
	for _, u := range []string{
		"oci://ghcr.io/team/engines",
		"oci://localhost:5000/cache/",
		"oci://[::1]:5000/a/b/c",
		"s3://team-engines",
		"s3://team.engines/ci/cache?region=eu-west-1",
		"s3://engines/ci?endpoint=https://minio.example.com:9000&region=us-east-1",
	} {
		s, err := Open(context.Background(), u, Options{Getenv: env.Getenv})
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		if s.Location() != u {
			t.Errorf("Location() = %s, want %s", s.Location(), u)
		}
	}
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"oci://user:pass@ghcr.io/team/cache":                            "oci://ghcr.io/team/cache",
		"oci://ghcr.io/team/cache#frag":                                 "oci://ghcr.io/team/cache",
		"s3://b/p?endpoint=http://127.0.0.1:9000&region=us-east-1":      "s3://b/p?endpoint=http://127.0.0.1:9000&region=us-east-1",
		"s3://b/p?endpoint=https%3A%2F%2Fk%3As%40host&region=r":         "s3://b/p?endpoint=https://host&region=r",
		"s3://b?X-Amz-Signature=abc&token=t&endpoint=http://h&flag":     "s3://b?X-Amz-Signature=REDACTED&token=REDACTED&endpoint=http://h&flag",
		"oci://u:p@host:bad/x?secret=1":                                 "oci://host:bad/x",
		"s3://k:s@b/%zz?token=t":                                        "s3://b/%zz",
		"https://s3.example.com/b/k?X-Amz-Credential=AKIA&X-Amz-Sig=ab": "https://s3.example.com/b/k?X-Amz-Credential=REDACTED&X-Amz-Sig=REDACTED",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%s) = %s, want %s", in, got, want)
		}
	}
}
