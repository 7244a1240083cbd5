package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"
)

// newTransport is the HTTP transport both stores send through: HTTPS with
// the system's roots plus the certificates of SSL_CERT_FILE (and of the
// files the variables bundles name: AWS_CA_BUNDLE for S3), the process's
// proxy settings, and enough idle connections per host for parallel parts.
// Every request goes through the stall watchdog (watchdog.go).
func newTransport(o Options, bundles ...string) (http.RoundTripper, error) {
	roots, err := rootCAs(o.Getenv, append([]string{"SSL_CERT_FILE"}, bundles...))
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if o.dial != nil {
		t.DialContext = o.dial
	}
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	t.MaxIdleConnsPerHost = 16
	t.TLSHandshakeTimeout = 20 * time.Second
	return watchTransport{base: t}, nil
}

// systemBundles are the files crypto/x509 takes the system's roots from on
// Linux when SSL_CERT_FILE is not set, the first that exists (Go's
// src/crypto/x509/root_linux.go). They are read here only when the
// process's SSL_CERT_FILE is set, because then x509.SystemCertPool holds
// that file's certificates instead of the system's, and SSL_CERT_FILE adds
// to the system's roots here, as it does for curl and most tools.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// rootCAs is the pool HTTPS servers are checked against: nil (the
// system's) when none of the variables names a file, else the system's
// roots plus the PEM certificates of those files (a private registry's
// CA, a test's certificate).
func rootCAs(getenv func(string) string, variables []string) (*x509.CertPool, error) {
	var pool *x509.CertPool
	for _, v := range variables {
		file := getenv(v)
		if file == "" {
			continue
		}
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
		if pool == nil {
			pool = systemPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s names %s, which holds no PEM certificate", v, file)
		}
	}
	return pool, nil
}

// systemPool is a copy of the system's roots, whatever the process's
// SSL_CERT_FILE says.
func systemPool() *x509.CertPool {
	if os.Getenv("SSL_CERT_FILE") == "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			return x509.NewCertPool() // none to add to: the files' alone
		}
		return pool
	}
	pool := x509.NewCertPool()
	for _, f := range systemBundles {
		if pem, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(pem)
			break
		}
	}
	return pool
}

// isLoopback reports whether host (a URL's host, without port) is this
// machine: 127.0.0.0/8, ::1 or localhost. A registry there is tried with
// HTTPS first and spoken to in plain HTTP when it does not speak TLS, as
// containerd and Docker treat local registries.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// notTLS reports whether err says the server answered a TLS handshake
// with something that is not TLS (a plain HTTP server).
func notTLS(err error) bool {
	var rec tls.RecordHeaderError
	return errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &rec)
}

// scrubbed is an error whose message has no URL query (scrub).
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// urlQuery matches the query of an http(s) URL in a message.
var urlQuery = regexp.MustCompile(`(https?://[^\s"?]+)\?[^\s"]*`)

// scrub is err with the queries of the http(s) URLs in its message left
// out (an s3:// store's own URL keeps its endpoint and region). The client
// libraries' errors name the URLs of their requests, and a blob's URL may
// be a registry's redirect to presigned storage, whose query is a
// credential; an upload's carries the registry's session state. The path,
// which names the repository and the digest, stays.
func scrub(err error) error {
	msg := err.Error()
	clean := urlQuery.ReplaceAllString(msg, "$1")
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}
