package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// lockedBuffer is a bytes.Buffer safe for a child process's writer and the
// test's reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// withLogs is the state a wait saw last (an error for eventually.NoError),
// printed with the logs of the processes it waited on. The logs are read
// only when the wait fails and prints it.
type withLogs struct {
	state string
	logs  []*lockedBuffer
}

func stateWithLogs(state string, logs ...*lockedBuffer) error { return withLogs{state, logs} }

func (e withLogs) Error() string {
	var b strings.Builder
	b.WriteString(e.state)
	for i, l := range e.logs {
		fmt.Fprintf(&b, "\n--- process %d:\n%s", i, l.String())
	}
	return b.String()
}
