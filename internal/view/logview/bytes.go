package logview

import "github.com/trt-action/trt-action/internal/text"

// fmtBytes is a size in decimal units: "12.3 MB".
func fmtBytes(n int64) string { return text.Bytes(n) }
