package remotetest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// S3Options say how an S3 server is served.
type S3Options struct {
	// TLS serves HTTPS with a certificate the test makes (CertFile, for
	// SSL_CERT_FILE or AWS_CA_BUNDLE); plain HTTP without.
	TLS bool
}

// S3 is Versity's S3 gateway (github.com/versity/versitygw, its POSIX
// backend) the test started, with one bucket.
type S3 struct {
	Endpoint  string // http://127.0.0.1:PORT, https:// with TLS
	Dir       string // the backend's folder: a bucket is a folder in it, an object a file
	CertFile  string // with TLS: its certificate, PEM
	Bucket    string
	AccessKey string
	SecretKey string
	proc      *process
}

// StartS3 starts an S3 server with an empty bucket, stopped at the test's
// end. The gateway is the program TRT_ACTION_VERSITYGW names
// (eval "$(scripts/setup-test-servers)" sets it), else versitygw on PATH.
func StartS3(t testing.TB, o S3Options) *S3 {
	t.Helper()
	bin, err := lookPath("versitygw", "TRT_ACTION_VERSITYGW")
	if err != nil {
		Need(t, "Versity's S3 gateway", fmt.Sprintf(`%v; eval "$(scripts/setup-test-servers)" builds it`, err))
	}
	s := &S3{Dir: t.TempDir(), Bucket: "trt-cache", AccessKey: "trt" + secret(6), SecretKey: secret(16)}
	// A bucket of the POSIX backend is a folder of its root.
	if err := os.Mkdir(filepath.Join(s.Dir, s.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	scheme, tls := "http", []string(nil)
	if o.TLS {
		cert, key := SelfSigned(t, t.TempDir())
		s.CertFile, scheme, tls = cert, "https", []string{"--cert", cert, "--key", key}
	}
	s.proc = startOn(t, "versitygw", func(port int) []string {
		s.Endpoint = scheme + "://127.0.0.1:" + strconv.Itoa(port)
		argv := []string{bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", "127.0.0.1:" + strconv.Itoa(port)}
		return append(append(argv, tls...), "posix", s.Dir)
	})
	return s
}

// URL is the s3:// URL of prefix in the bucket, through endpoint (the
// server's, or a proxy's in front of it).
func (s *S3) URL(prefix, endpoint string) string {
	u := "s3://" + s.Bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + url.QueryEscape(endpoint) + "&region=us-east-1"
}

// Env gives a client the server's keys, and keeps the AWS SDK from asking
// EC2's metadata service (an address off this machine) for others.
func (s *S3) Env() Env {
	return Env{
		"AWS_ACCESS_KEY_ID":         s.AccessKey,
		"AWS_SECRET_ACCESS_KEY":     s.SecretKey,
		"AWS_EC2_METADATA_DISABLED": "true",
	}
}

// ObjectFile is the file that holds the bucket's object name.
func (s *S3) ObjectFile(name string) string {
	return filepath.Join(s.Dir, s.Bucket, filepath.FromSlash(name))
}

// Kill kills the server as a crash would.
func (s *S3) Kill(t testing.TB) {
	t.Helper()
	if err := s.proc.kill(); err != nil {
		t.Fatal(err)
	}
}

// Restart starts a killed server again, on its port and folder.
func (s *S3) Restart(t testing.TB) {
	t.Helper()
	if err := s.proc.start(); err != nil {
		t.Fatal(err)
	}
}

// Output is what the server logged last.
func (s *S3) Output() string { return s.proc.output() }
