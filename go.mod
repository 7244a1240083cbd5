module github.com/trt-action/trt-action

go 1.26.8

require (
	github.com/google/go-github/v60 v60.0.0
	github.com/mattn/go-runewidth v0.0.30
	github.com/sethvargo/go-githubactions v1.4.0
	github.com/vbauerster/cupwriter v0.0.5
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/acarl005/stripansi v0.0.0-20180116102854-5a71ef0e047d // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/vbauerster/mpb/v8 v8.16.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
