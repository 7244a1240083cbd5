package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Store is a bucket (and a prefix in it) of an S3-compatible store, through
// AWS's SDK: S3, MinIO, Ceph, R2, GCS's interoperability endpoint.
//
// Layout, under PREFIX/v<FormatVersion>/:
//
//	blobs/sha256/HEX   a file, named by its SHA-256: a file several entries
//	                   have is stored once, and an upload of bytes the
//	                   bucket has already is skipped
//	entries/KEY        the entry's record (s3Record, JSON, at most
//	                   maxRecordBytes), written after its files: a
//	                   reader sees a whole entry or none, and a
//	                   replacement is one write
type s3Store struct {
	location string
	bucket   string
	root     string // PREFIX/v2/, or v2/
	endpoint string // the endpoint= URL, "" for AWS's own
	stall    time.Duration
	client   *s3.Client
	upload   *transfermanager.Client
	creds    aws.CredentialsProvider
}

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

var (
	s3Bucket = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	s3Region = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
)

func openS3(ctx context.Context, u *url.URL, o Options) (Store, error) {
	raw := u.String()
	if u.Port() != "" || !s3Bucket.MatchString(u.Host) {
		return nil, badURL(raw, "%q is not a bucket's name (3 to 63 lowercase letters, digits, dots and hyphens)", u.Host)
	}
	prefix := strings.Trim(u.Path, "/")
	for part := range strings.SplitSeq(prefix, "/") {
		if prefix != "" && (part == "" || part == "." || part == "..") {
			return nil, badURL(raw, "PREFIX %q has an empty, . or .. part", prefix)
		}
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, badURL(raw, "its query does not parse")
	}
	for k, v := range query {
		if k != "endpoint" && k != "region" || len(v) != 1 {
			return nil, badURL(raw, "its query may give endpoint=URL and region=R, each once")
		}
	}
	endpoint, region := query.Get("endpoint"), query.Get("region")
	if err := checkEndpoint(endpoint); err != nil {
		return nil, badURL(raw, "%s", err)
	}
	if region != "" && !s3Region.MatchString(region) {
		return nil, badURL(raw, "region %q is not a region's name", region)
	}
	root := fmt.Sprintf("v%d/", FormatVersion)
	if prefix != "" {
		root = prefix + "/" + root
	}
	s := &s3Store{location: Redact(raw), bucket: u.Host, root: root, endpoint: endpoint, stall: o.Stall}
	if err := s.connect(ctx, o, region); err != nil {
		return nil, err
	}
	return s, nil
}

// checkEndpoint checks an endpoint= URL: http or https, a host, nothing
// secret.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	e, err := url.Parse(endpoint)
	switch {
	case err != nil || e.Scheme != "http" && e.Scheme != "https" || e.Host == "":
		return fmt.Errorf("endpoint %q is not an http:// or https:// URL", Redact(endpoint))
	case e.User != nil || e.RawQuery != "" || e.Fragment != "":
		return fmt.Errorf("endpoint %q has credentials, a query or a fragment, which it may not", Redact(endpoint))
	}
	return nil
}

// connect makes s's clients. Credentials come from the SDK's default chain
// (the environment's AWS_ACCESS_KEY_ID, as aws-actions/configure-aws-
// credentials leaves them after an OIDC role assumption; web identity;
// shared files and profiles; ECS and EC2 roles), except that keys in
// Options.Getenv (a test's) are used first, as the chain's first step
// would. The region: the URL's, else AWS_REGION or AWS_DEFAULT_REGION,
// else the shared config's, else us-east-1 (which S3-compatible stores
// accept). With endpoint=, requests are path-style
// (ENDPOINT/BUCKET/KEY), which every S3-compatible store serves.
func (s *s3Store) connect(ctx context.Context, o Options, region string) error {
	transport, err := newTransport(o.Getenv, "AWS_CA_BUNDLE")
	if err != nil {
		return err
	}
	if region == "" {
		region = cmpOr(o.Getenv("AWS_REGION"), o.Getenv("AWS_DEFAULT_REGION"))
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			// Bounded: 5 attempts, 3 s apart at most, and no client-side
			// retry quota, so a failure costs a known time.
			return awsretry.NewStandard(func(r *awsretry.StandardOptions) {
				r.MaxAttempts = 5
				r.MaxBackoff = 3 * time.Second
				r.RateLimiter = ratelimit.None
			})
		}),
		// The SDK's own checksums (CRC32 by default since 2025) only where
		// an operation needs them: several S3-compatible stores refuse
		// them, and every byte is checked by its SHA-256 on reading anyway.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if key, secret := o.Getenv("AWS_ACCESS_KEY_ID"), o.Getenv("AWS_SECRET_ACCESS_KEY"); key != "" && secret != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(key, secret, o.Getenv("AWS_SESSION_TOKEN"))))
	}
	if o.Getenv("AWS_EC2_METADATA_DISABLED") == "true" {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("%s: reading the AWS configuration: %w", s.location, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	s.creds = cfg.Credentials
	s.client = s3.NewFromConfig(cfg, func(c *s3.Options) {
		// The store's requests go through this package's transport (the
		// watchdog, SSL_CERT_FILE); the SDK's own client is left to the
		// credential providers (STS for OIDC), with AWS_CA_BUNDLE.
		c.HTTPClient = &http.Client{Transport: transport}
		if s.endpoint != "" {
			c.BaseEndpoint = aws.String(s.endpoint)
			c.UsePathStyle = true
		}
	})
	// transfermanager, AWS's successor to the deprecated feature/s3/manager:
	// uploads above its threshold (16 MiB) go as parallel parts (8 MiB, 5 at
	// once), each retried alone, far below the 5 GiB one PUT may carry.
	s.upload = transfermanager.New(s.client, func(t *transfermanager.Options) {
		t.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		if o.partSize > 0 {
			t.PartSizeBytes = o.partSize
			t.MultipartUploadThreshold = o.partSize
		}
		t.FailTimeout = 10 * time.Second // for the abort of a failed multipart upload
	})
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *s3Store) Location() string { return s.location }

func (s *s3Store) recordName(key string) string { return s.root + "entries/" + key }
func (s *s3Store) blobName(sum string) string   { return s.root + "blobs/sha256/" + sum }

// begin starts an operation: its watchdog, and the credentials, fetched
// (or taken from the cache) first so that none found is told as such.
func (s *s3Store) begin(ctx context.Context) (context.Context, *watchdog, error) {
	ctx, w := watch(ctx, s.stall)
	if _, err := s.creds.Retrieve(ctx); err != nil {
		w.stop()
		return ctx, nil, fmt.Errorf("%s: no AWS credentials were found (the SDK's default chain: AWS_ACCESS_KEY_ID and "+
			"AWS_SECRET_ACCESS_KEY, web identity, profiles, ECS and EC2 roles): %w", s.location, ErrAuth)
	}
	return ctx, w, nil
}

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
		return nil, corrupt("the record does not parse: %v", err)
	}
	if d.More() {
		return nil, corrupt("the record has more than one JSON value")
	}
	switch {
	case r.Format != FormatVersion:
		return nil, corrupt("the record has format %d, not %d", r.Format, FormatVersion)
	case !validKey(r.Key):
		return nil, corrupt("the record's key %q is not a key", r.Key)
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
	body := &s3Body{ctx: ctx, s: s, key: r.Key, v: newVerifier(out.Body, f.Name, f.Size, f.SHA256), body: out.Body}
	return newWatchedReader(ctx, body, w), nil
}

// s3Body is a blob's body, checked, with its errors named by the store.
type s3Body struct {
	ctx  context.Context
	s    *s3Store
	key  string
	v    *verifier
	body io.Closer
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.v.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, ErrCorrupt) {
		err = b.s.fail(b.ctx, "reading "+b.key, err)
	}
	return n, err
}

func (b *s3Body) Close() error { return b.body.Close() }

// Has looks at key's record with one HEAD.
func (s *s3Store) Has(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer w.stop()
	ok, err := s.exists(ctx, s.recordName(key), -1)
	return ok, s.fail(ctx, "looking up "+key, err)
}

// exists reports whether the bucket has the object name (of size bytes,
// unless size is -1).
func (s *s3Store) exists(ctx context.Context, name string, size int64) (bool, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &name})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return size < 0 || aws.ToInt64(out.ContentLength) == size, nil
}

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

// List lists every record's entry: its files' sizes, its upload time (the
// record's Last-Modified, the store's clock) and metadata. A record that
// does not parse is listed with its key and time alone.
func (s *s3Store) List(ctx context.Context, fn func(Listed) error) error {
	ctx, w, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer w.stop()
	var callerErr error
	err = s.records(ctx, func(key string, r *s3Record, modified time.Time) error {
		l := Listed{Key: key, Uploaded: modified}
		if r != nil {
			l.Meta = r.Meta
			for _, f := range r.Files {
				l.Size += f.Size
			}
		}
		w.pause()
		callerErr = fn(l)
		w.resume()
		return callerErr
	})
	if callerErr != nil {
		return callerErr
	}
	return s.fail(ctx, "listing", err)
}

// records calls fn for every record under entries/ whose name is a key,
// read and parsed (r nil when it does not parse, or went away meanwhile).
func (s *s3Store) records(ctx context.Context, fn func(key string, r *s3Record, modified time.Time) error) error {
	prefix := s.root + "entries/"
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(o.Key), prefix)
			if !validKey(key) {
				continue
			}
			e, err := s.get(ctx, key)
			var r *s3Record
			switch {
			case err == nil:
				r = e.ref.(*s3Record)
			case isNotFound(err), errors.Is(err, ErrCorrupt):
			default:
				return err
			}
			if err := fn(key, r, aws.ToTime(o.LastModified)); err != nil {
				return err
			}
		}
	}
	return nil
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
	swept, err := s.sweep(ctx, time.Now().Add(-grace))
	return swept, s.fail(ctx, "sweeping", err)
}

func (s *s3Store) sweep(ctx context.Context, before time.Time) (Swept, error) {
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
	err := s.records(ctx, func(_ string, r *s3Record, _ time.Time) error {
		if r != nil {
			for _, f := range r.Files {
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

// fail is the error of an operation, doing what: named by the store and,
// where it is one of the package's errors, wrapping it. The SDK's errors
// name the operation, the status and the store's error code, never a
// request's headers (where the signature is).
func (s *s3Store) fail(ctx context.Context, doing string, err error) error {
	if err == nil {
		return nil
	}
	err = stalled(ctx, err)
	code, status := s3Code(err), httpStatus(err)
	switch {
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrStalled), errors.Is(err, ErrNotFound):
	case isNotFound(err):
		return fmt.Errorf("%s: %s: %w", s.location, doing, ErrNotFound)
	case code == "NoSuchBucket":
		return fmt.Errorf("%s: %s: there is no bucket %s%s", s.location, doing, s.bucket, s.at())
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s: %s: %s refused the credentials, or what they may do (%s, HTTP %d): %w",
			s.location, doing, s.host(), cmpOr(code, "no error code"), status, ErrAuth)
	}
	return fmt.Errorf("%s: %s: %w", s.location, doing, err)
}

// host names the store's server in messages.
func (s *s3Store) host() string {
	if s.endpoint == "" {
		return "S3"
	}
	u, _ := url.Parse(s.endpoint)
	return u.Host
}

func (s *s3Store) at() string {
	if s.endpoint == "" {
		return ""
	}
	return " at " + s.host()
}

// s3Code is an SDK error's S3 error code ("NoSuchKey"), "" when it has none.
func s3Code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// httpStatus is the HTTP status of an SDK error's response, 0 when it has
// none.
func httpStatus(err error) int {
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) {
		return resp.HTTPStatusCode()
	}
	return 0
}

// isNotFound reports whether err says the object is not there: a GET's
// NoSuchKey, a HEAD's bare 404.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	code := s3Code(err)
	return code == "NoSuchKey" || code == "NotFound" || (httpStatus(err) == http.StatusNotFound && code != "NoSuchBucket")
}
