package actions

import (
	"fmt"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// Annotation levels.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNotice  = "notice"
)

// maxMessage is where the runner cuts an annotation message; cutting it
// ourselves keeps the cut on a character boundary and before escaping.
const maxMessage = 4096

// Annotation returns one annotation command line (without newline), e.g.
// "::error file=m.yaml,line=3,title=T::message". Annotations cannot be
// fenced, so the title and message are neutralised and then escaped by the
// workflow-command rules: data escapes % CR LF, properties also : and ,.
// An unknown level becomes a notice. file and line are left out when empty
// or not positive.
func Annotation(level, title, message string, file string, line int) string {
	switch level {
	case LevelError, LevelWarning, LevelNotice:
	default:
		level = LevelNotice
	}
	var props []string
	if file != "" {
		props = append(props, "file="+escapeProperty(Neutralise(file)))
	}
	if line > 0 {
		props = append(props, fmt.Sprintf("line=%d", line))
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(Neutralise(title)))
	}
	cmd := "::" + level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(text.CutRunes(Neutralise(message), maxMessage))
}

func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

func escapeProperty(s string) string {
	s = escapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// Note is one annotation waiting to be emitted.
type Note struct {
	Level   string // LevelError, LevelWarning or LevelNotice
	Title   string
	Message string
	File    string
	Line    int
}

// String renders the note as an annotation command line.
func (n Note) String() string {
	return Annotation(n.Level, n.Title, n.Message, n.File, n.Line)
}

// Per-step limits the runner enforces (more are dropped silently), and the
// share we allow ourselves so later steps of the job still have room.
const (
	runnerCapPerLevel = 10
	DefaultPerLevel   = 5 // exported for view/logview's test of the annotation cap
)

// Budget hands out annotation slots for one step: at most PerLevel of each
// level over the budget's whole life. It remembers what it refused so the
// caller can say how many were dropped.
type Budget struct {
	perLevel int
	used     map[string]int
	dropped  int
}

// NewBudget allows perLevel annotations of each level; values outside
// 1..RunnerCapPerLevel become DefaultPerLevel.
func NewBudget(perLevel int) *Budget {
	if perLevel < 1 || perLevel > runnerCapPerLevel {
		perLevel = DefaultPerLevel
	}
	return &Budget{perLevel: perLevel, used: map[string]int{}}
}

// levelRank orders levels worst first.
func levelRank(level string) int {
	switch level {
	case LevelError:
		return 0
	case LevelWarning:
		return 1
	default:
		return 2
	}
}

// Take returns the notes that fit, worst level first; within a level the
// given order is kept (callers list the most important first). Notes that
// do not fit are counted in Dropped.
func (b *Budget) Take(notes []Note) []Note {
	var kept []Note
	for rank := 0; rank <= 2; rank++ {
		for _, n := range notes {
			if levelRank(n.Level) != rank {
				continue
			}
			level := normalLevel(n.Level)
			if b.used[level] >= b.perLevel {
				b.dropped++
				continue
			}
			b.used[level]++
			n.Level = level
			kept = append(kept, n)
		}
	}
	return kept
}

// Dropped is how many notes Take refused so far.
func (b *Budget) Dropped() int { return b.dropped }

func normalLevel(level string) string {
	switch level {
	case LevelError, LevelWarning:
		return level
	}
	return LevelNotice
}
