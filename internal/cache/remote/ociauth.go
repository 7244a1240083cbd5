package remote

import (
	"context"
	"fmt"
	"path/filepath"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// ociCredentials finds a registry's credentials as `docker login` and
// `oras login` leave them: in $DOCKER_CONFIG/config.json, else
// $HOME/.docker/config.json, whether in the file itself or in the
// credential helper it names (credsStore, credHelpers: the
// docker-credential-NAME program on PATH, run by oras-go's credentials
// package). On GitHub Actions (GITHUB_ACTIONS=true), a job's GITHUB_TOKEN
// is used for ghcr.io when the file gives nothing for it, with GITHUB_ACTOR
// as the user name (GHCR checks the token alone). A config.json that
// cannot be read is an error here, at Open, before any request.
func ociCredentials(getenv func(string) string) (auth.CredentialFunc, error) {
	var fromFile auth.CredentialFunc
	if path := dockerConfig(getenv); path != "" {
		store, err := credentials.NewStore(path, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading registry credentials: %w", err)
		}
		fromFile = credentials.Credential(store)
	}
	return func(ctx context.Context, hostport string) (auth.Credential, error) {
		cred := auth.EmptyCredential
		if fromFile != nil {
			var err error
			if cred, err = fromFile(ctx, hostport); err != nil {
				return auth.EmptyCredential, fmt.Errorf("reading the credentials for %s: %w", hostport, err)
			}
		}
		if cred == auth.EmptyCredential && hostport == "ghcr.io" && getenv("GITHUB_ACTIONS") == "true" {
			if token := getenv("GITHUB_TOKEN"); token != "" {
				user := getenv("GITHUB_ACTOR")
				if user == "" {
					user = "github-actions"
				}
				cred = auth.Credential{Username: user, Password: token}
			}
		}
		return cred, nil
	}, nil
}

// dockerConfig is the path of Docker's config.json: in DOCKER_CONFIG, else
// in HOME's .docker; "" with neither.
func dockerConfig(getenv func(string) string) string {
	if dir := getenv("DOCKER_CONFIG"); dir != "" {
		return filepath.Join(dir, "config.json")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".docker", "config.json")
	}
	return ""
}
