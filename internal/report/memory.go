package report

import "github.com/trt-action/trt-action/internal/text"

// How a build's memory reads wherever it is shown: the terminal's and
// the log's result lines, the summary's memory column and timeline, the
// JUnit properties (docs/reports.md).

// MemoryText is a build's peak memory: "4.1 GB", with its GPU memory when
// measured, "4.1 GB · GPU 2.0 GB"; "" when nothing was measured.
func MemoryText(m *Memory) string {
	if m == nil || m.PeakHostBytes == 0 && m.PeakGPUBytes == 0 {
		return ""
	}
	var s string
	if m.PeakHostBytes > 0 {
		s = text.Bytes(m.PeakHostBytes)
	}
	if m.PeakGPUBytes > 0 {
		if s != "" {
			s += " · "
		}
		s += "GPU " + text.Bytes(m.PeakGPUBytes)
	}
	return s
}

// MemoryPeakText is MemoryText as a result line says it: "peak 4.1 GB".
func MemoryPeakText(m *Memory) string {
	if t := MemoryText(m); t != "" {
		return "peak " + t
	}
	return ""
}
