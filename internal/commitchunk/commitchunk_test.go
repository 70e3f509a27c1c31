package commitchunk

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	unit := func(n int) int { return n }
	for _, tc := range []struct {
		name   string
		sizes  []int
		budget int
		want   [][]int
	}{
		{"nothing", nil, 10, nil},
		{"all in one", []int{3, 3, 3}, 10, [][]int{{3, 3, 3}}},
		{"exactly the budget", []int{5, 5, 5}, 10, [][]int{{5, 5}, {5}}},
		{"one over the budget alone", []int{2, 20, 2}, 10, [][]int{{2}, {20}, {2}}},
		{"first over the budget", []int{20, 1, 1}, 10, [][]int{{20}, {1, 1}}},
		{"many runs", []int{4, 4, 4, 4, 4, 4, 4}, 8, [][]int{{4, 4}, {4, 4}, {4, 4}, {4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Split(tc.sizes, unit, tc.budget)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("Split(%v, %d) = %v, want %v", tc.sizes, tc.budget, got, tc.want)
			}
			// A run never shares its backing array's tail: appending to
			// one run must not overwrite the next.
			if len(got) > 1 {
				next := slices.Clone(got[1])
				_ = append(got[0], -1)
				if !slices.Equal(got[1], next) {
					t.Fatalf("appending to run 0 changed run 1: %v, was %v", got[1], next)
				}
			}
		})
	}
}
