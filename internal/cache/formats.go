package cache

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/trt-action/trt-action/internal/text"
)

// Folders of other cache formats. Each format keeps its entries in a
// folder of its own (v1/, v2/, ...) beside the others, and a version of
// trt-action reads only its own. After an upgrade, the old format's folder
// stays: on a self-hosted runner's folder it would be kept for ever, and
// counted by nothing. So cache ls names every such folder with its size,
// a build that opens the cache tells of the older ones once, and cache
// prune --other-formats removes the older ones. A newer format's folder
// belongs to a newer trt-action sharing the folder: it is named, never
// removed.

// OtherFormat is a folder of another cache format in the cache folder.
type OtherFormat struct {
	Path   string
	Format int
	Bytes  int64  // what the files in it hold (0 for a link)
	Link   string // what it names when it is a symbolic link, never followed
	name   string
}

// Older says whether the folder is of an older format than this
// version's, which prune --other-formats removes.
func (o OtherFormat) Older() bool { return o.Format < FormatVersion }

// String is how messages name it: "v1/ (cache format 1, 12.3 MB)", or
// for a link "the symbolic link v1 (to /x) where cache format 1's folder
// would be".
func (o OtherFormat) String() string {
	if o.Link != "" {
		return fmt.Sprintf("the symbolic link %s (to %s) where cache format %d's folder would be", text.Plain(o.Path), text.Plain(o.Link), o.Format)
	}
	return fmt.Sprintf("%s (cache format %d, %s)", text.Plain(o.Path), o.Format, text.Bytes(o.Bytes))
}

// formatOf is the format a folder name stands for: "v1" is 1. Only the
// names a format would have count ("v01" and "v" are no format's).
func formatOf(name string) (int, bool) {
	if len(name) < 2 || name[0] != 'v' {
		return 0, false
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n <= 0 || strconv.Itoa(n) != name[1:] || n == FormatVersion {
		return 0, false
	}
	return n, true
}

// otherFormats lists the folders of other formats in the cache folder
// top, oldest format first, with their sizes: every one for cache ls, or
// only the older ones (olderOnly) for a build's notice and prune
// --other-formats, so a newer trt-action's folder is never gone through
// for a size nobody is shown. It changes nothing and follows no link.
func otherFormats(top *folder, olderOnly bool) ([]OtherFormat, error) {
	names, err := top.names()
	if err != nil {
		return nil, err
	}
	var out []OtherFormat
	for _, name := range names {
		n, ok := formatOf(name)
		if !ok || (olderOnly && n > FormatVersion) {
			continue
		}
		st, err := top.lstat(name)
		if isNotExist(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		o := OtherFormat{Path: top.join(name) + "/", Format: n, name: name}
		switch {
		case st.isLink():
			o.Path = top.join(name)
			o.Link, _ = readlinkat(top.fd(), name)
		case st.mode.IsDir():
			if o.Bytes, err = top.sizeOf(name); err != nil {
				return nil, err
			}
		default:
			continue // a file named like a format folder is no format's
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b OtherFormat) int { return a.Format - b.Format })
	return out, nil
}

// noteOlderFormats is the notice a build gets, once, when the cache
// folder holds folders of older formats: they are never read, and only
// prune --other-formats removes them.
func (c *Cache) noteOlderFormats() {
	top, err := openTop(c.dir)
	if err != nil {
		return
	}
	defer top.close()
	older, err := otherFormats(top, true)
	if err != nil {
		return
	}
	for _, o := range older {
		c.notify(o.neverRead())
	}
}

// neverRead is what cache ls and a build say of an older format's folder.
func (o OtherFormat) neverRead() string {
	if o.Link != "" {
		return fmt.Sprintf("%s is never followed; trt-action cache prune --other-formats removes the link", o)
	}
	return fmt.Sprintf("%s is never read by this version (cache format %d); trt-action cache prune --other-formats removes it", o, FormatVersion)
}

// formatWarnings are what cache ls says of each folder of another format.
func formatWarnings(others []OtherFormat) []string {
	var out []string
	for _, o := range others {
		switch {
		case o.Older():
			out = append(out, o.neverRead())
		case o.Link != "":
			out = append(out, fmt.Sprintf("%s is never followed, nor removed by this version (cache format %d)", o, FormatVersion))
		default:
			out = append(out, fmt.Sprintf("%s is a newer trt-action's: this version (cache format %d) never reads or removes it", o, FormatVersion))
		}
	}
	return out
}

// pruneFormats opens the cache folder and its format folder (made when
// missing: the removal stages through its tmp/) for pruneOlderFormats.
func (c *Cache) pruneFormats() ([]OtherFormat, error) {
	top, err := openTop(c.dir)
	if err != nil {
		return nil, err
	}
	defer top.close()
	root, err := top.makeSub(versionName)
	if err != nil {
		return nil, err
	}
	defer root.close()
	return c.pruneOlderFormats(top, root)
}

// pruneOlderFormats removes the folders of older formats (a link there:
// the link). Each folder is first renamed into a staging folder of this
// process in root's tmp/, so it leaves the cache folder in one step (an
// old trt-action reading it at that moment finds it whole or not at all)
// and a removal killed part way is a staging leftover the next Open
// removes.
func (c *Cache) pruneOlderFormats(top, root *folder) ([]OtherFormat, error) {
	older, err := otherFormats(top, true)
	if err != nil {
		return nil, err
	}
	var removed []OtherFormat
	for _, o := range older {
		if err := c.removeFormat(top, root, o); err != nil {
			return removed, err
		}
		removed = append(removed, o)
	}
	return removed, nil
}

func (c *Cache) removeFormat(top, root *folder, o OtherFormat) error {
	if o.Link != "" {
		return ignoreFolder(top.removeLink(o.name))
	}
	st, err := c.newStage(root, "format-")
	if err != nil {
		return err
	}
	defer st.remove()
	if err := top.rename(o.name, st.dir, o.name); err != nil {
		if isNotExist(err) {
			return nil // removed meanwhile
		}
		return err
	}
	return nil
}
