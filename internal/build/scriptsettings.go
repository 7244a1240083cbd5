package build

import (
	"encoding/json"

	"github.com/trt-action/trt-action/internal/report"
)

// configSettings is a TensorRT build's settings as the hook read them
// from its config, under the matrix's key names; nil when it sent none.
func configSettings(raw json.RawMessage, library string) *report.Settings {
	if len(raw) == 0 {
		return nil
	}
	return &report.Settings{Library: library, Applied: map[string]any{}}
}
