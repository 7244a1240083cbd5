package remote

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// scheme is one kind of store, named by its URL scheme.
type scheme struct {
	name string // the URL scheme: "oci"
	form string // the URL's form, for messages: "oci://HOST[:PORT]/REPOSITORY"
	// open opens a store at u (parsed from raw), whose scheme is name,
	// after checking the rest of it. It does no I/O over the network: a store that is down
	// fails at its first request, not here. A *URLError for a URL of the
	// wrong form.
	open func(ctx context.Context, raw string, u *url.URL, o Options) (Store, error)
}

// schemes is the registry of store kinds; a new kind is a new entry here.
var schemes = []scheme{
	{name: "oci", form: "oci://HOST[:PORT]/REPOSITORY", open: openOCI},
	{name: "s3", form: "s3://BUCKET[/PREFIX][?endpoint=URL&region=R]", open: openS3},
}

// Forms lists the URL forms of the stores, in the order messages list them.
func Forms() []string {
	out := make([]string, len(schemes))
	for i, s := range schemes {
		out[i] = s.form
	}
	return out
}

// URLError is Open's error for a URL that names no store: what is wrong,
// and the forms a store's URL may take. URL is redacted (Redact).
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("remote store %q: %s; a remote store is %s", e.URL, e.Reason, strings.Join(Forms(), " or "))
}

// badURL is a *URLError for raw.
func badURL(raw, format string, args ...any) *URLError {
	return &URLError{URL: Redact(raw), Reason: fmt.Sprintf(format, args...)}
}

// Open opens the store rawURL names. It checks the URL and reads the
// local configuration the store needs (credentials files, SSL_CERT_FILE),
// but sends nothing over the network. Credentials in the URL itself are
// refused: a URL is shown in logs and reports.
func Open(ctx context.Context, rawURL string, o Options) (Store, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stall <= 0 {
		o.Stall = DefaultStall
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, badURL(rawURL, "not a URL")
	}
	i := slices.IndexFunc(schemes, func(s scheme) bool { return s.name == u.Scheme })
	switch {
	case u.Scheme == "":
		return nil, badURL(rawURL, "no scheme")
	case i < 0:
		return nil, badURL(rawURL, "unknown scheme %q", u.Scheme)
	case u.Opaque != "" || u.Host == "":
		return nil, badURL(rawURL, "no host after %s://", u.Scheme)
	case u.User != nil:
		return nil, badURL(rawURL, "credentials do not belong in the URL, which is shown in logs and reports; "+
			"see the store's credentials in docs/engine-cache.md")
	case u.Fragment != "":
		return nil, badURL(rawURL, "a #fragment means nothing here")
	}
	return schemes[i].open(ctx, rawURL, u, o)
}

// Redact returns rawURL as messages, reports and listings may show it:
// without userinfo, a fragment, or any query value that is not known to
// be harmless (an S3 endpoint, itself redacted, and a region are kept;
// any other value is replaced by "REDACTED"). A URL that does not parse
// loses everything up to the last @ of its authority and everything
// from its first ? or #.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" {
		return redactUnparsed(rawURL)
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	query := u.RawQuery
	u.RawQuery, u.ForceQuery = "", false
	out := u.String()
	if query != "" {
		out += "?" + redactQuery(query)
	}
	return out
}

// redactQuery keeps a query's keys in order, each value as Redact's
// comment says.
func redactQuery(query string) string {
	var out []string
	for pair := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			out = append(out, "REDACTED")
			continue
		}
		switch key {
		case "region":
			out = append(out, pair)
		case "endpoint":
			value, err := url.QueryUnescape(v)
			if err != nil {
				out = append(out, k+"=REDACTED")
				continue
			}
			value = Redact(value)
			if strings.ContainsAny(value, "&#+% ") {
				value = url.QueryEscape(value)
			}
			out = append(out, k+"="+value)
		default:
			if v == "" && !strings.Contains(pair, "=") {
				out = append(out, k)
				continue
			}
			out = append(out, k+"=REDACTED")
		}
	}
	return strings.Join(out, "&")
}

// redactUnparsed is Redact for a string url.Parse refuses.
func redactUnparsed(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if i := strings.Index(raw, ":"); i >= 0 {
		start = i + 1
	}
	authority := raw[start:]
	if i := strings.Index(authority, "/"); i >= 0 {
		authority = authority[:i]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		raw = raw[:start] + raw[start+at+1:]
	}
	return raw
}
