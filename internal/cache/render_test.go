package cache

import (
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
)

// listingNow is the time the golden listings are rendered at.
var listingNow = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

// sampleListing has an entry of each kind cache ls shows: one used just
// now, one used days ago with a name that would mention someone, one
// whose metadata did not read (nothing known but its size), and one whose
// engine is not a file; and the links and leftovers ls warns of.
func sampleListing() Listing {
	key := func(c string) Key { return Key(strings.Repeat(c, 64)) }
	return Listing{
		Entries: []Entry{
			{Key: key("a"), Build: "resnet50-fp16", Backend: "tensorrt-rtx", Library: "TensorRT-RTX 1.7.1.116", Target: "sm89",
				BuiltAt: listingNow.Add(-26 * time.Hour), Duration: 14*time.Minute + 3*time.Second, Files: []File{{Name: engineName, Role: RoleEngine, Size: 51_200_000, SHA256: strings.Repeat("0", 64)}},
				DiskSize: 51_206_512, LastUsed: listingNow.Add(-20 * time.Second)},
			{Key: key("b"), Build: "@octocat's mlp", Backend: "sim", BuiltAt: listingNow.Add(-72 * time.Hour), Duration: 900 * time.Millisecond,
				Files: []File{{Name: engineName, Role: RoleEngine, Size: 1_000}}, DiskSize: 7_480, LastUsed: listingNow.Add(-3 * time.Hour)},
			{Key: key("c"), DiskSize: 1_009, LastUsed: listingNow.Add(-90 * time.Minute), Broken: "its metadata is not valid JSON"},
			{Key: key("d"), Build: "piped", Backend: "sim", DiskSize: 6_400, Broken: "its engine is a FIFO, not a file"},
		},
		Strays:       []Stray{{Path: ".trt-cache/v3/ab", Target: "/elsewhere"}},
		StagingLinks: []Stray{{Path: ".trt-cache/v3/tmp/store-1", Target: "/tmp/x"}},
		Leftovers:    2,
		OtherFormats: []OtherFormat{{Path: ".trt-cache/v1", Format: 1, Link: "/mnt/@octocat"},
			{Path: ".trt-cache/v4/", Format: 4, Bytes: 2_048}, {Path: ".trt-cache/v5", Format: 5, Link: "/x"}},
	}
}

func TestListingGolden(t *testing.T) {
	l := sampleListing()
	golden.Check(t, "ls.golden.txt", ListingTable(l.Entries, listingNow))
	golden.Check(t, "ls-warnings.golden.txt", strings.Join(l.Warnings(), "\n")+"\n")
	data, err := ListingJSON(l.Entries)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "ls.golden.json", string(data))
	golden.Check(t, "ls-empty.golden.txt", ListingTable(nil, listingNow))
}

func TestPrunedTextGolden(t *testing.T) {
	l := sampleListing()
	pruned := Pruned{Entries: []Entry{l.Entries[2], l.Entries[3], l.Entries[1]}, Strays: l.Strays,
		Formats: []OtherFormat{{Path: ".trt-cache/v1/", Format: 1, Bytes: 812_000_000}, l.OtherFormats[0]}}
	golden.Check(t, "prune.golden.txt", PrunedText(pruned, listingNow, false))
	// A prune that failed says what it removed before it failed, or,
	// having removed nothing, only its error (printed by the caller).
	golden.Check(t, "prune-failed.golden.txt", PrunedText(Pruned{Entries: pruned.Entries[:1]}, listingNow, true))
	if got := PrunedText(Pruned{}, listingNow, true); got != "" {
		t.Errorf("a prune that failed before removing anything printed %q", got)
	}
	if got := PrunedText(Pruned{}, listingNow, false); got != "removed 0 entries, 0 B\n" {
		t.Errorf("a prune that removed nothing: %q", got)
	}
}
