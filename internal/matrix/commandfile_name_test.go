package matrix

import "testing"

func TestACommandIsNamedByWhatItRuns(t *testing.T) {
	for want, argv := range map[string][]string{
		"yolo":       {"/usr/bin/yolo", "export", "model=yolo11n.pt"},
		"export.py":  {"python3", "-u", "tools/export.py", "--fp16"},
		"build.py":   {"/venv/bin/python3.11", "-X", "dev", "-W", "ignore", "build.py"},
		"polygraphy": {"python", "-m", "polygraphy", "convert"},
		"trtllm_x":   {"python", "-mtrtllm_x"},
		"python":     {"python", "-c", "import tensorrt"},
		"python3":    {"python3"},
		"trtexec":    {"trtexec", "--onnx=m.onnx"},
	} {
		if got := commandName(argv); got != want {
			t.Errorf("%q is named %q, want %q", argv, got, want)
		}
	}
}
