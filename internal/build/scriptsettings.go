package build

import (
	"encoding/json"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/settings"
)

// configSettings is a TensorRT build's settings as the hook read them
// from its config, under the matrix's key names (settings.FromConfig);
// nil when it sent none it could read.
func configSettings(raw json.RawMessage, library string) *report.Settings {
	var c settings.Config
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil {
		return nil
	}
	return &report.Settings{Library: library, Applied: settings.FromConfig(c)}
}
