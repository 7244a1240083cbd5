package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// A registry with TLS (a certificate the test makes, trusted through
// SSL_CERT_FILE) and basic auth: the right credentials from a Docker
// config.json work; wrong ones and none are ErrAuth naming the store and
// the host, never the password; without SSL_CERT_FILE the certificate is
// refused (no fall back to plain HTTP for a server that speaks TLS).
func TestOCITLSAndBasicAuth(t *testing.T) {
	r := remotetest.StartRegistry(t, remotetest.RegistryOptions{TLS: true, Auth: true})
	ctx := context.Background()
	key := keyOf("auth")
	engine := testFile(t, "engine", 2<<20, 5)
	open := func(env remotetest.Env) Store {
		s, err := Open(ctx, r.URL("trt/cache"), Options{Getenv: env.Getenv})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	right := r.Env().With("DOCKER_CONFIG", remotetest.DockerConfig(t, r.Host, r.User, r.Password))
	s := open(right)
	put(t, s, key, engine, false)
	got, err := readAll(t, s, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)

	wrong := r.Env().With("DOCKER_CONFIG", remotetest.DockerConfig(t, r.Host, r.User, "not-"+r.Password))
	_, err = open(wrong).Get(ctx, key)
	wantAuthError(t, err, r.Host, r.Password, "not-"+r.Password)
	_, err = open(wrong).Put(ctx, keyOf("other"), testMeta(key), []Upload{engine}, false)
	wantAuthError(t, err, r.Host, r.Password, "not-"+r.Password)

	_, err = open(r.Env().With("HOME", t.TempDir())).Get(ctx, key)
	wantAuthError(t, err, r.Host)
	if !strings.Contains(err.Error(), "none were found") {
		t.Errorf("the error does not say no credentials were found: %v", err)
	}

	_, err = open(remotetest.Env{"DOCKER_CONFIG": right["DOCKER_CONFIG"]}).Get(ctx, key)
	if err == nil || errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without SSL_CERT_FILE: %v; want the certificate refused", err)
	}
}

// wantAuthError checks an ErrAuth error: it names the host and holds none
// of the secrets.
func wantAuthError(t testing.TB, err error, host string, secrets ...string) {
	t.Helper()
	wantErr(t, err, ErrAuth)
	if !strings.Contains(err.Error(), host) {
		t.Errorf("the error does not name %s: %v", host, err)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error holds a secret: %v", err)
		}
	}
}

// A Docker config.json that names a credential helper for the registry:
// the helper (docker-credential-NAME on PATH) gives the credentials.
func TestOCICredentialHelper(t *testing.T) {
	r := remotetest.StartRegistry(t, remotetest.RegistryOptions{TLS: true, Auth: true})
	bin := t.TempDir()
	helper := "#!/bin/sh\n[ \"$1\" = get ] || exit 1\ncat >/dev/null\n" +
		"printf '{\"ServerURL\":\"%s\",\"Username\":\"" + r.User + "\",\"Secret\":\"" + r.Password + "\"}' \"" + r.Host + "\"\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-trttest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	config := remotetest.WriteDockerConfig(t, map[string]any{"credHelpers": map[string]string{r.Host: "trttest"}})
	s, err := Open(context.Background(), r.URL("trt/cache"), Options{Getenv: r.Env().With("DOCKER_CONFIG", config).Getenv})
	if err != nil {
		t.Fatal(err)
	}
	key := keyOf("helper")
	engine := testFile(t, "engine", 1<<20, 6)
	put(t, s, key, engine, false)
	got, err := readAll(t, s, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, got, engine)
}

// On GitHub Actions the job's GITHUB_TOKEN is ghcr.io's credential when
// the Docker config gives none for it; never another host's, never off
// Actions, never over the config's.
func TestOCICredentialsGitHubToken(t *testing.T) {
	ctx := context.Background()
	actions := remotetest.Env{"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": "ghs_token", "GITHUB_ACTOR": "octocat",
		"HOME": t.TempDir()}
	cases := []struct {
		name string
		env  remotetest.Env
		host string
		want auth.Credential
	}{
		{"ghcr on Actions", actions, "ghcr.io", auth.Credential{Username: "octocat", Password: "ghs_token"}},
		{"another host", actions, "registry.example.com", auth.EmptyCredential},
		{"off Actions", actions.With("GITHUB_ACTIONS", ""), "ghcr.io", auth.EmptyCredential},
		{"the config's first", actions.With("DOCKER_CONFIG", remotetest.DockerConfig(t, "ghcr.io", "me", "pat")),
			"ghcr.io", auth.Credential{Username: "me", Password: "pat"}},
	}
	for _, c := range cases {
		cred, err := ociCredentials(c.env.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cred(ctx, c.host)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// Wrong keys for the S3 store are ErrAuth naming the store's host, never
// the secret.
func TestS3WrongCredentials(t *testing.T) {
	fx := s3Fixture(t)
	s := fx.open(t, fx.URL)
	key := keyOf("s3 auth")
	put(t, s, key, testFile(t, "engine", 1<<20, 7), false)
	wrongSecret := "x" + fx.S3.SecretKey
	bad, err := Open(context.Background(), fx.URL, Options{Getenv: fx.Env.With("AWS_SECRET_ACCESS_KEY", wrongSecret).Getenv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Get(context.Background(), key)
	wantAuthError(t, err, fx.Target, wrongSecret, fx.S3.SecretKey)
	_, err = bad.Put(context.Background(), keyOf("s3 auth 2"), testMeta(key), []Upload{testFile(t, "engine", 1<<10, 8)}, false)
	wantAuthError(t, err, fx.Target, wrongSecret, fx.S3.SecretKey)
}

// An S3 endpoint over TLS with a certificate the test makes, trusted
// through SSL_CERT_FILE or AWS_CA_BUNDLE (which the AWS SDK reads): both
// add to the system's roots; without either the certificate is refused.
func TestS3OverTLS(t *testing.T) {
	srv := remotetest.StartS3(t, remotetest.S3Options{TLS: true})
	url := srv.URL("cache", srv.Endpoint)
	key := keyOf("s3 tls")
	engine := testFile(t, "engine", 1<<20, 27)
	for i, variable := range []string{"SSL_CERT_FILE", "AWS_CA_BUNDLE"} {
		s, err := Open(context.Background(), url, Options{Getenv: srv.Env().With(variable, srv.CertFile).Getenv})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			put(t, s, key, engine, false)
		}
		got, err := readAll(t, s, key, 0)
		if err != nil {
			t.Fatalf("%s: %v", variable, err)
		}
		sameBytes(t, got, engine)
	}
	s, err := Open(context.Background(), url, Options{Getenv: srv.Env().Getenv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(context.Background(), key)
	if err == nil || errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the certificate: %v; want it refused", err)
	}
}

// Credentials the AWS SDK's chain finds but cannot use (a web identity
// role whose token file is missing, as in a workflow without id-token:
// write) are ErrAuth that says why, not that none were found.
func TestS3CredentialsThatCannotBeHadSayWhy(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "web-identity-token")
	for name, value := range map[string]string{
		"AWS_ROLE_ARN":                "arn:aws:iam::123456789012:role/trt-engines",
		"AWS_WEB_IDENTITY_TOKEN_FILE": token,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_ACCESS_KEY_ID":           "",
		"AWS_SECRET_ACCESS_KEY":       "",
		"AWS_PROFILE":                 "",
	} {
		t.Setenv(name, value)
	}
	s, err := Open(context.Background(), "s3://trt-cache/team?endpoint=http://127.0.0.1:9&region=us-east-1", Options{Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(context.Background(), keyOf("web identity"))
	wantErr(t, err, ErrAuth)
	if !strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "no AWS credentials were found") {
		t.Fatalf("got %v; want why the credentials the chain found cannot be used (the token file %s)", err, token)
	}
}
