package build

import (
	"sync"

	"github.com/trt-action/trt-action/internal/event"
)

// maxViewBacklog is how many events may wait for slow views before
// heartbeats are dropped (nothing else ever is).
const maxViewBacklog = 1024

// viewQueue hands events to the views on a goroutine of its own, in order,
// so a slow terminal or a paused log pipe never delays the run's loop:
// signals, budgets and kills keep working while the views catch up.
type viewQueue struct {
	deliver func(event.Event)

	mu      sync.Mutex
	wake    *sync.Cond
	pending []event.Event
	closed  bool
	done    chan struct{}
}

func newViewQueue(deliver func(event.Event)) *viewQueue {
	q := &viewQueue{deliver: deliver, done: make(chan struct{})}
	q.wake = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// send queues an event; it never blocks on the views.
func (q *viewQueue) send(ev event.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ev.Kind == event.Heartbeat && len(q.pending) >= maxViewBacklog {
		return // the next heartbeat says the same, newer
	}
	q.pending = append(q.pending, ev)
	q.wake.Signal()
}

// close delivers what is queued and waits for the views to take it.
func (q *viewQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.wake.Signal()
	q.mu.Unlock()
	<-q.done
}

func (q *viewQueue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.closed {
			q.wake.Wait()
		}
		batch := q.pending
		q.pending = nil
		closed := q.closed
		q.mu.Unlock()
		for _, ev := range batch {
			q.deliver(ev)
		}
		if closed && len(batch) == 0 {
			return
		}
	}
}
