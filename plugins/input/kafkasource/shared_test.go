package kafkasource

import "testing"

// The event_window buffer checks window keys against partitions only when
// other processes may read some of the source's partitions.
func TestPartitionsShared(t *testing.T) {
	for _, tc := range []struct {
		conf Config
		want bool
	}{
		{Config{Assignment: AssignmentEnumerator, Shard: Shard{Index: 0, Count: 1}}, false},
		{Config{Assignment: AssignmentEnumerator, Shard: Shard{Index: 1, Count: 2}}, true},
		{Config{Assignment: AssignmentGroup, Shard: Shard{Index: 0, Count: 1}}, true},
	} {
		if got := (&session{conf: tc.conf}).PartitionsShared(); got != tc.want {
			t.Errorf("assignment %s shard %+v: PartitionsShared = %v, want %v", tc.conf.Assignment, tc.conf.Shard, got, tc.want)
		}
	}
}
