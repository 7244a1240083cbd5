package cache

import (
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote"
)

// The shared stores name the cache format in what they write (an OCI
// artifact's type, an S3 folder), from a constant of their own: the remote
// package cannot import this one. It must be this format, or entries of
// one version would be read as another's.
func TestRemoteStoresUseThisFormat(t *testing.T) {
	if remote.FormatVersion != FormatVersion {
		t.Fatalf("remote.FormatVersion is %d, internal/cache.FormatVersion %d: change both together", remote.FormatVersion, FormatVersion)
	}
}
