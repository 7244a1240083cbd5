package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// With KeepEncodings, builds that ended are encoded once; the report reads
// back the same as the builds in memory, one build a line, and a build
// still running is encoded afresh each time.
func TestKeptEncodingsReadBackAndFollowRunningBuilds(t *testing.T) {
	for _, spooled := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "r.json")
		r := sampleReport()
		r.Builds[2].Status = StatusRunning
		r.KeepEncodings()
		if !spooled {
			r.encoded.spool = nil // as when no temporary file can be made
		}
		if err := WriteJSON(path, r); err != nil {
			t.Fatal(err)
		}
		if !r.encoded.entries[0].ok || len(r.encoded.entries) > 2 || (r.encoded.spool != nil) != spooled {
			t.Errorf("spooled %v: cache after the first write: %+v", spooled, r.encoded.entries)
		}
		r.Builds[2].Status, r.Builds[2].DurationMs = StatusFailed, 1500 // it ends
		for range 2 {                                                   // the second write reads every build from the cache
			if err := WriteJSON(path, r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := ReadJSON(path)
		if err != nil {
			t.Fatal(err)
		}
		want := sampleReport()
		if !reflect.DeepEqual(got.Builds, want.Builds) {
			t.Errorf("spooled %v: builds read back differ:\n got %+v\nwant %+v", spooled, got.Builds, want.Builds)
		}
		data, _ := os.ReadFile(path)
		if lines := strings.Count(string(data), "\n"); lines != len(want.Builds)+2 {
			t.Errorf("%d lines, want the head, one a build, and the end", lines)
		}
		if !bytes.HasPrefix(data, []byte(`{"version":2,`)) {
			t.Errorf("report starts %q", data[:min(40, len(data))])
		}
	}
}

// BenchmarkCheckpoint2000 is one checkpoint of a 2,000-build matrix: the
// report written and the summary rendered, with the builds' encodings kept
// from earlier checkpoints; settled as the supervisor settles them (the
// summary reads back the builds its phase table and timeline draw), or
// kept whole.
func BenchmarkCheckpoint2000(b *testing.B) {
	for _, settle := range []bool{false, true} {
		b.Run(fmt.Sprintf("settle=%v", settle), func(b *testing.B) {
			in := &testing.T{}
			one := matrixReport(in).Builds[0]
			r := matrixReport(in)
			r.Builds = make([]Build, 2000)
			r.KeepEncodings()
			for i := range r.Builds {
				c := one
				c.Name = strings.Repeat("b", 1+i%7) + string(rune('a'+i%26))
				if settle {
					r.Settle(i, &c)
				} else {
					r.Builds[i] = c
				}
			}
			path := filepath.Join(b.TempDir(), "r.json")
			for b.Loop() {
				if err := WriteJSON(path, r); err != nil {
					b.Fatal(err)
				}
				_ = Summary(r, SummaryOptions{})
			}
			st, _ := os.Stat(path)
			b.ReportMetric(float64(st.Size())/2000, "report-bytes/build")
		})
	}
}
