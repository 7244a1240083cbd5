package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
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
	root     string // PREFIX/v<FormatVersion>/, or v<FormatVersion>/
	endpoint string // the endpoint= URL, "" for AWS's own
	stall    time.Duration
	client   *s3.Client
	upload   *transfermanager.Client
	creds    aws.CredentialsProvider
}

var (
	s3Bucket = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	s3Region = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
)

// openS3 opens s3://BUCKET[/PREFIX][?endpoint=URL&region=R], after
// checking every part of it.
func openS3(ctx context.Context, raw string, u *url.URL, o Options) (Store, error) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if u.Port() != "" || !s3Bucket.MatchString(u.Host) {
		add("%q is not a bucket's name (3 to 63 lowercase letters, digits, dots and hyphens)", u.Host)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" && slices.ContainsFunc(strings.Split(prefix, "/"), func(p string) bool { return p == "" || p == "." || p == ".." }) {
		add("PREFIX %q has an empty, . or .. part", prefix)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		add("its query does not parse")
	}
	for k, v := range query {
		if k != "endpoint" && k != "region" || len(v) != 1 {
			add("its query may give endpoint=URL and region=R, each once, and nothing else")
			break
		}
	}
	endpoint, region := query.Get("endpoint"), query.Get("region")
	if err := checkEndpoint(endpoint); err != nil {
		add("%s", err)
	}
	if region != "" && !s3Region.MatchString(region) {
		add("region %q is not a region's name", region)
	}
	if len(problems) > 0 {
		return nil, badURL(raw, "%s", strings.Join(problems, "; "))
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
	transport, err := newTransport(o, "AWS_CA_BUNDLE")
	if err != nil {
		return err
	}
	if region == "" {
		region = cmp.Or(o.Getenv("AWS_REGION"), o.Getenv("AWS_DEFAULT_REGION"))
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
		// The abort of a failed multipart upload gets a context of its own
		// for this long (the operation's may be canceled by then).
		t.FailTimeout = min(o.Stall, 10*time.Second)
	})
	return nil
}

func (s *s3Store) Location() string { return s.location }

func (s *s3Store) recordName(key string) string { return s.root + "entries/" + key }
func (s *s3Store) blobName(sum string) string   { return s.root + "blobs/sha256/" + sum }

// begin starts an operation: its watchdog, and the credentials, fetched
// (or taken from the cache) first so that credentials that cannot be had
// are told as such, with the SDK's reason: none found is one, and so is
// one the chain found but could not use (a web identity token file
// missing, STS refusing the role, a credential_process failing), which
// "none were found" would misname.
func (s *s3Store) begin(ctx context.Context) (context.Context, *watchdog, error) {
	ctx, w := watch(ctx, s.stall)
	if _, err := s.creds.Retrieve(ctx); err != nil {
		err = stalled(ctx, err)
		w.stop()
		if errors.Is(err, ErrStalled) {
			return ctx, nil, fmt.Errorf("%s: getting AWS credentials: %w", s.location, err)
		}
		return ctx, nil, fmt.Errorf("%s: the AWS SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "+
			"web identity, profiles, ECS and EC2 roles) gave no credentials (%v): %w", s.location, scrub(err), ErrAuth)
	}
	return ctx, w, nil
}

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
			s.location, doing, s.host(), cmp.Or(code, "no error code"), status, ErrAuth)
	}
	return scrub(fmt.Errorf("%s: %s: %w", s.location, doing, err))
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
