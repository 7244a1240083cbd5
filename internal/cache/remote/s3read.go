package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/trt-action/trt-action/internal/text"
)

// s3Record is an entry's record: the object entries/KEY.
type s3Record struct {
	Format int      `json:"format"` // FormatVersion
	Key    string   `json:"key"`
	Meta   []byte   `json:"meta"` // the metadata bytes (base64 in the JSON)
	Files  []s3File `json:"files"`
}

// s3File is a File as a record writes it.
type s3File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// files are the record's files.
func (r *s3Record) files() []File {
	out := make([]File, len(r.Files))
	for i, f := range r.Files {
		out[i] = File(f)
	}
	return out
}

// maxRecordBytes bounds a record as Get reads it: the metadata in base64
// and a few lines per file.
const maxRecordBytes = MaxMetaBytes*4/3 + 64<<10

// Get reads key's record: at most maxRecordBytes, asked for by range and
// refused unread when the object is larger.
func (s *s3Store) Get(ctx context.Context, key string) (*Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	e, err := s.get(ctx, key)
	return e, s.fail(ctx, "looking up "+key, err)
}

func (s *s3Store) get(ctx context.Context, key string) (*Entry, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: aws.String(s.recordName(key)),
		Range: aws.String(fmt.Sprintf("bytes=0-%d", maxRecordBytes)),
	})
	if err != nil {
		if s3Code(err) == "InvalidRange" { // an empty object
			return nil, corrupt("the record is empty")
		}
		return nil, err
	}
	defer out.Body.Close()
	if total := objectSize(out); total > maxRecordBytes {
		return nil, corrupt("the record is %d bytes, more than the %d allowed, refused unread", total, maxRecordBytes)
	}
	b, err := io.ReadAll(io.LimitReader(out.Body, maxRecordBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordBytes {
		return nil, corrupt("the record is more than the %d bytes allowed", maxRecordBytes)
	}
	r, err := parseRecord(b)
	if err != nil {
		return nil, err
	}
	return &Entry{Key: r.Key, Meta: r.Meta, Files: r.files(), Uploaded: aws.ToTime(out.LastModified), ref: r}, nil
}

// objectSize is a ranged GET's object size, from Content-Range
// ("bytes 0-N/TOTAL"), else its Content-Length (a store that ignored the
// range); -1 when neither says.
func objectSize(out *s3.GetObjectOutput) int64 {
	if cr := aws.ToString(out.ContentRange); cr != "" {
		if _, total, ok := strings.Cut(cr, "/"); ok {
			if n, err := strconv.ParseInt(total, 10, 64); err == nil {
				return n
			}
		}
	}
	if out.ContentLength != nil {
		return *out.ContentLength
	}
	return -1
}

// parseRecord reads a record as strictly as internal/cache reads a local
// entry's metadata: no field unknown, this format, a key, files.
func parseRecord(b []byte) (*s3Record, error) {
	var r s3Record
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, corrupt("the record does not parse: %s", cutError(err))
	}
	if d.More() {
		return nil, corrupt("the record has more than one JSON value")
	}
	switch {
	case r.Format != FormatVersion:
		return nil, corrupt("the record has format %d, not %d", r.Format, FormatVersion)
	case !validKey(r.Key):
		return nil, corrupt("the record's key %s is not a key", text.QuotedCut(r.Key))
	case len(r.Meta) > MaxMetaBytes:
		return nil, corrupt("the record's metadata is %d bytes, more than %d", len(r.Meta), MaxMetaBytes)
	}
	if err := checkFiles(r.files()); err != nil {
		return nil, err
	}
	return &r, nil
}

// Open streams file i's blob through a verifier of the record's size and
// SHA-256. A blob the record names and the bucket lacks, or serves with
// another length, is corrupt.
func (s *s3Store) Open(ctx context.Context, e *Entry, i int) (io.ReadCloser, error) {
	r, ok := e.ref.(*s3Record)
	if !ok || i < 0 || i >= len(r.Files) {
		return nil, fmt.Errorf("%s: file %d of an entry this store's Get did not return", s.location, i)
	}
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	f := r.Files[i]
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.blobName(f.SHA256))})
	switch {
	case isNotFound(err):
		err = corrupt("%s: the bucket has no blob %s, which the record names", f.Name, f.SHA256)
	case err == nil && out.ContentLength != nil && *out.ContentLength != f.Size:
		out.Body.Close()
		err = corrupt("%s: the bucket serves %d bytes for blob %s, not the %d the record names", f.Name, *out.ContentLength, f.SHA256, f.Size)
	}
	if err != nil {
		w.stop()
		return nil, s.fail(ctx, "reading "+r.Key, err)
	}
	body := namedReader{readCloser{newVerifier(out.Body, f.Name, f.Size, f.SHA256), out.Body},
		func(err error) error { return s.fail(ctx, "reading "+r.Key, err) }}
	return newWatchedReader(ctx, body, w), nil
}

// List lists every record's entry: its files' sizes, its upload time (the
// record's Last-Modified, the store's clock) and metadata. A record that
// does not parse is listed with its key and time alone.
func (s *s3Store) List(ctx context.Context, fn func(Listed) error) error {
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer w.stop()
	err = s.records(ctx, w, func(r s3Listed) error {
		l := Listed{Key: r.key, Uploaded: r.modified}
		if r.record != nil {
			l.Meta = r.record.Meta
			for _, f := range r.record.Files {
				l.Size += f.Size
			}
		}
		return fn(l)
	})
	var caller callerError
	if errors.As(err, &caller) {
		return caller.err
	}
	return s.fail(ctx, "listing", err)
}

// s3Listed is a record as records finds it: nil when it does not parse.
type s3Listed struct {
	key      string
	record   *s3Record
	modified time.Time
}

// records calls use for every record under entries/ whose name is a key,
// read and parsed (lookAll: several at a time), but those that went away
// meanwhile.
func (s *s3Store) records(ctx context.Context, w *watchdog, use func(s3Listed) error) error {
	prefix := s.root + "entries/"
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		var keys []string
		modified := map[string]time.Time{}
		for _, o := range page.Contents {
			if key := strings.TrimPrefix(aws.ToString(o.Key), prefix); validKey(key) {
				keys = append(keys, key)
				modified[key] = aws.ToTime(o.LastModified)
			}
		}
		err = lookAll(ctx, w, keys, func(ctx context.Context, key string) (s3Listed, bool, error) {
			l := s3Listed{key: key, modified: modified[key]}
			e, err := s.get(ctx, key)
			switch {
			case err == nil:
				l.record = e.ref.(*s3Record)
			case isNotFound(err):
				return l, false, nil
			case !errors.Is(err, ErrCorrupt):
				return l, false, err
			}
			return l, true, nil
		}, use)
		if err != nil {
			return err
		}
	}
	return nil
}
