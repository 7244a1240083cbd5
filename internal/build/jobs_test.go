package build

import "testing"

func TestCapJobs(t *testing.T) {
	for _, c := range []struct {
		jobs, slots, cores, want int
		why                      string
	}{
		{jobs: 3, cores: 2, want: 3},
		{jobs: 8, cores: 2, want: 8},
		{jobs: 100000, cores: 2, want: 8, why: "more than 4 per core (2 cores)"},
		{jobs: 9, cores: 1, want: 4, why: "more than 4 per core (1 core)"},
		{jobs: 5, slots: 4, cores: 64, want: 4, why: "more than the GPUs take at once (4 slots: GPUs × --builds-per-gpu); the rest would only wait"},
		{jobs: 4, slots: 4, cores: 1, want: 4},
	} {
		got, why := CapJobs(c.jobs, c.slots, c.cores)
		if got != c.want || why != c.why {
			t.Errorf("CapJobs(%d, %d, %d) = %d, %q; want %d, %q", c.jobs, c.slots, c.cores, got, why, c.want, c.why)
		}
	}
}
