package main

import "testing"

func TestMemoryLimitStaysAboveWhatIsLive(t *testing.T) {
	for _, tc := range []struct {
		name string
		live uint64
		want int64
	}{
		{"little live: the floor", 10 << 20, memoryFloor},
		{"at the floor's two thirds", memoryFloor * 2 / 3, memoryFloor},
		{"10,000 waiting agents", 100 << 20, 150 << 20},
		{"far above the floor", 1 << 30, 3 << 29},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memoryLimitFor(tc.live)
			if got != tc.want {
				t.Fatalf("limit for %d live bytes = %d, want %d", tc.live, got, tc.want)
			}
			if uint64(got) <= tc.live {
				t.Fatalf("limit %d not above the live %d: the collector would run without end", got, tc.live)
			}
		})
	}
}
