package build

import (
	"strings"
	"testing"
)

func TestWorkersGetNoWorkflowTokens(t *testing.T) {
	env := workerEnviron([]string{"PATH=/bin", "GITHUB_TOKEN=x", "INPUT_GITHUB-TOKEN=y", "ACTIONS_RUNTIME_TOKEN=z",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=w", "GITHUB_ACTIONS=true", "MY_TOKEN=kept"})
	if got := strings.Join(env, " "); got != "PATH=/bin GITHUB_ACTIONS=true MY_TOKEN=kept" {
		t.Errorf("worker environment = %s", got)
	}
}
