package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Put uploads the files the bucket lacks, then the record. Without replace,
// an entry already there (looked at first, so nothing is uploaded for it)
// stays: the record is written with If-None-Match: *, which AWS S3 (since
// 2024), Versity's gateway, MinIO and R2 honour atomically, and a 412
// answer means pushed=false. A store that answers 501 to it is written to
// without the condition, after the HEAD; there two runners racing both
// write, and the last record wins (both are right for the key). With
// replace, every file is uploaded again even where the bucket has its
// name (so a replacement also mends a blob whose bytes were changed in
// the store), and the record is overwritten in one write.
func (s *s3Store) Put(ctx context.Context, key string, meta []byte, files []Upload, replace bool) (bool, error) {
	if err := checkUploads(key, meta, files); err != nil {
		return false, fmt.Errorf("%s: putting %s: %w", s.location, key, err)
	}
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer w.stop()
	pushed, err := s.put(ctx, key, meta, files, replace)
	return pushed, s.fail(ctx, "putting "+key, err)
}

func (s *s3Store) put(ctx context.Context, key string, meta []byte, files []Upload, replace bool) (bool, error) {
	if !replace {
		if there, err := s.exists(ctx, s.recordName(key), -1); err != nil || there {
			return false, err
		}
	}
	record := s3Record{Format: FormatVersion, Key: key, Meta: meta}
	for _, f := range files {
		record.Files = append(record.Files, s3File(f.File))
		name := s.blobName(f.SHA256)
		if !replace {
			if there, err := s.exists(ctx, name, f.Size); err != nil || there {
				if err != nil {
					return false, err
				}
				continue
			}
		}
		_, err := s.upload.UploadObject(ctx, &transfermanager.UploadObjectInput{
			Bucket: &s.bucket, Key: &name,
			Body: io.NewSectionReader(f.Body, 0, f.Size), ContentLength: aws.Int64(f.Size),
		})
		if err != nil {
			return false, err
		}
	}
	b, err := json.Marshal(record)
	if err != nil {
		return false, err
	}
	return s.writeRecord(ctx, key, b, !replace)
}

// writeRecord writes key's record, only where there is none when
// ifNone (see Put).
func (s *s3Store) writeRecord(ctx context.Context, key string, b []byte, ifNone bool) (bool, error) {
	in := &s3.PutObjectInput{
		Bucket: &s.bucket, Key: aws.String(s.recordName(key)),
		Body: bytes.NewReader(b), ContentType: aws.String("application/json"),
	}
	if ifNone {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := s.client.PutObject(ctx, in)
	switch {
	case err == nil:
		return true, nil
	case ifNone && httpStatus(err) == http.StatusPreconditionFailed:
		return false, nil
	case ifNone && httpStatus(err) == http.StatusNotImplemented:
		return s.writeRecord(ctx, key, b, false)
	}
	return false, err
}

// Delete deletes key's record; its blobs stay for Sweep, since other
// entries may have the same files.
func (s *s3Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer w.stop()
	name := s.recordName(key)
	there, err := s.exists(ctx, name, -1)
	if err == nil && !there {
		err = ErrNotFound
	}
	if err == nil {
		_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &name})
	}
	return s.fail(ctx, "deleting "+key, err)
}

// Sweep deletes the blobs no record names that were uploaded more than
// grace ago. The blobs are listed before the records, so a record written
// during the sweep keeps a blob it names; what is left is a Put that found
// an old unnamed blob there (and so skipped its upload) just before the
// sweep deleted it: its entry then names a missing blob, which Open
// reports as corrupt, and the rebuild's replacement uploads it again.
// A record that cannot be read (not one that does not parse) stops the
// sweep: its blobs are not known.
func (s *s3Store) Sweep(ctx context.Context, grace time.Duration) (Swept, error) {
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return Swept{}, err
	}
	defer w.stop()
	swept, err := s.sweep(ctx, w, time.Now().Add(-grace))
	return swept, s.fail(ctx, "sweeping", err)
}

func (s *s3Store) sweep(ctx context.Context, w *watchdog, before time.Time) (Swept, error) {
	type blob struct {
		name string
		size int64
	}
	var old []blob
	prefix := s.root + "blobs/sha256/"
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return Swept{}, err
		}
		for _, o := range page.Contents {
			if aws.ToTime(o.LastModified).Before(before) {
				old = append(old, blob{aws.ToString(o.Key), aws.ToInt64(o.Size)})
			}
		}
	}
	named := map[string]bool{}
	err := s.records(ctx, w, func(r s3Listed) error {
		if r.record != nil {
			for _, f := range r.record.Files {
				named[s.blobName(f.SHA256)] = true
			}
		}
		return nil
	})
	if err != nil {
		return Swept{}, err
	}
	var swept Swept
	for _, b := range old {
		if named[b.name] {
			continue
		}
		if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &b.name}); err != nil {
			return swept, err
		}
		swept.Files++
		swept.Bytes += b.size
	}
	return swept, nil
}
