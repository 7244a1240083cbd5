package remotetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// RegistryOptions say how a registry is served.
type RegistryOptions struct {
	// TLS serves HTTPS with a certificate the test makes (CertFile, for
	// SSL_CERT_FILE); plain HTTP without.
	TLS bool
	// Auth asks for basic auth (htpasswd, bcrypt): User and Password.
	Auth bool
	// NoDelete serves without storage.delete.enabled: deletions are
	// refused, as GHCR's registry API refuses them.
	NoDelete bool
}

// Registry is a CNCF Distribution registry (Debian's docker-registry) the
// test started.
type Registry struct {
	Host     string // 127.0.0.1:PORT
	Dir      string // its storage's root folder
	CertFile string // with TLS: its certificate, PEM (SSL_CERT_FILE)
	User     string // with Auth
	Password string
	proc     *process
}

// StartRegistry starts a registry, stopped at the test's end.
func StartRegistry(t testing.TB, o RegistryOptions) *Registry {
	t.Helper()
	bin, err := lookPath("docker-registry", "TRT_ACTION_DOCKER_REGISTRY")
	if err != nil {
		Need(t, "the CNCF Distribution registry", fmt.Sprintf("%v; apt-get install docker-registry", err))
	}
	dir := t.TempDir()
	r := &Registry{Dir: filepath.Join(dir, "storage")}
	var tls, auth string
	if o.TLS {
		cert, key := SelfSigned(t, dir)
		r.CertFile = cert
		tls = fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", cert, key)
	}
	if o.Auth {
		r.User, r.Password = "trt", secret(12)
		hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(file, []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: trt-action-test\n    path: %s\n", file)
	}
	r.proc = startOn(t, "docker-registry", func(port int) []string {
		r.Host = "127.0.0.1:" + strconv.Itoa(port)
		config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: %t
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
%s%s`, r.Dir, !o.NoDelete, r.Host, tls, auth)
		file := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{bin, "serve", file}
	})
	return r
}

// URL is the oci:// URL of repository repo.
func (r *Registry) URL(repo string) string { return "oci://" + r.Host + "/" + repo }

// Env is what a client needs to trust the registry's certificate (none
// without TLS); the credentials are the test's to give (DockerConfig).
func (r *Registry) Env() Env {
	if r.CertFile == "" {
		return Env{}
	}
	return Env{"SSL_CERT_FILE": r.CertFile}
}

// Kill kills the registry as a crash would.
func (r *Registry) Kill(t testing.TB) {
	t.Helper()
	if err := r.proc.kill(); err != nil {
		t.Fatal(err)
	}
}

// Restart starts a killed registry again, on its port and storage.
func (r *Registry) Restart(t testing.TB) {
	t.Helper()
	if err := r.proc.start(); err != nil {
		t.Fatal(err)
	}
}

// Output is what the registry logged last.
func (r *Registry) Output() string { return r.proc.output() }

// BlobFile is the file in the registry's storage that holds the blob
// sha256:hex (its layout: github.com/distribution/distribution's
// registry/storage/paths.go).
func (r *Registry) BlobFile(hex string) string {
	return filepath.Join(r.Dir, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}

// DockerConfig writes a Docker config.json that gives user and password
// for host, as `docker login` leaves them, in a new folder for
// DOCKER_CONFIG.
func DockerConfig(t testing.TB, host, user, password string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return WriteDockerConfig(t, map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
}

// WriteDockerConfig writes config as a Docker config.json in a new folder
// for DOCKER_CONFIG.
func WriteDockerConfig(t testing.TB, config map[string]any) string {
	t.Helper()
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SelfSigned makes a certificate for 127.0.0.1, ::1 and localhost that
// is its own root, and its key, PEM files in dir.
func SelfSigned(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "trt-action test server"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
