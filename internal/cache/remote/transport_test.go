package remote

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// SSL_CERT_FILE adds its certificates to the system's roots: both verify.
func TestSSLCertFileAddsToTheSystemRoots(t *testing.T) {
	dir := t.TempDir()
	certFile, _ := remotetest.SelfSigned(t, dir)
	pool, err := rootCAs(remotetest.Env{"SSL_CERT_FILE": certFile}.Getenv, []string{"SSL_CERT_FILE"})
	if err != nil {
		t.Fatal(err)
	}
	for what, cert := range map[string]*x509.Certificate{"the file's": firstCert(t, certFile), "a system root": systemRoot(t)} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
			t.Errorf("%s certificate does not verify: %v", what, err)
		}
	}
	if pool, err := rootCAs(remotetest.Env{}.Getenv, []string{"SSL_CERT_FILE"}); pool != nil || err != nil {
		t.Errorf("without SSL_CERT_FILE: %v, %v; want the system's roots (nil)", pool, err)
	}
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("no PEM here"), 0o600)
	if _, err := rootCAs(remotetest.Env{"SSL_CERT_FILE": empty}.Getenv, []string{"SSL_CERT_FILE"}); err == nil ||
		!strings.Contains(err.Error(), "SSL_CERT_FILE names "+empty) {
		t.Errorf("a file without certificates: %v; want an error naming it", err)
	}
}

func firstCert(t testing.TB, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM in %s", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// systemRoot is a certificate of the system's roots.
func systemRoot(t testing.TB) *x509.Certificate {
	t.Helper()
	for _, f := range systemBundles {
		if _, err := os.Stat(f); err == nil {
			return firstCert(t, f)
		}
	}
	t.Fatalf("none of %v is here: no system roots (Debian's ca-certificates)", systemBundles)
	return nil
}

func TestLoopbackHosts(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "localhost": true, "LOCALHOST": true, "[::1]": true, "::1": true,
		"128.0.0.1": false, "ghcr.io": false, "localhost.example.com": false, "10.0.0.1": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%s) = %v, want %v", host, got, want)
		}
	}
}

// scrub takes the query off the http(s) URLs in a message, which may be a
// presigned URL's credential, and keeps what the error wraps.
func TestScrub(t *testing.T) {
	err := fmt.Errorf("s3://b/p?endpoint=http://h:9&region=r: reading k: Get \"https://bucket.s3.example.com/blob?X-Amz-Credential=AKIA&X-Amz-Signature=abc\": %w", ErrCorrupt)
	got := scrub(err)
	want := "s3://b/p?endpoint=http://h:9&region=r: reading k: Get \"https://bucket.s3.example.com/blob\": " + ErrCorrupt.Error()
	if got.Error() != want || !errors.Is(got, ErrCorrupt) {
		t.Errorf("scrub = %q, want %q wrapping ErrCorrupt", got, want)
	}
}
