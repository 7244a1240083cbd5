package wheel

import "strconv"

// The manylinux policies (PEP 600, https://peps.python.org/pep-0600/): a
// wheel tagged manylinux_X_Y runs on any Linux with glibc X.Y or newer, so
// its files may link only libraries every such system has, at symbol
// versions glibc X.Y's generation of them defines. The facts below are those
// of auditwheel 6.8.2's src/auditwheel/policy/manylinux-policy.json
// (https://github.com/pypa/auditwheel/blob/6.8.2/src/auditwheel/policy/manylinux-policy.json),
// the table `auditwheel show` decides by, for the two architectures we ship.
// TestPolicyTableAgreesWithAuditwheel compares them with the JSON of the
// auditwheel that scripts/setup-dist-tools installs.
//
// Our form: per policy and architecture, the newest numbered version of
// each versioned library it allows, and the few named versions it allows
// besides (CXXABI_TM_1, ...). auditwheel keeps the full list of versions;
// "up to the newest" allows the same versions a file can need, since a
// version the library never defined on that architecture is in no file.

// libraryVersions names the newest version each symbol-version prefix may
// have, in the order GLIBC, GLIBCXX, CXXABI, GCC, LIBATOMIC ("" = none).
type libraryVersions [5]string

// versionPrefixes are the symbol-version prefixes a policy limits, in
// libraryVersions' order. auditwheel limits ZLIB_ too, which only libz.so.1
// defines; our table leaves libz.so.1 out (see policyLibraries).
var versionPrefixes = [5]string{"GLIBC", "GLIBCXX", "CXXABI", "GCC", "LIBATOMIC"}

// policy is one manylinux policy on one architecture.
type policy struct {
	glibcMinor int // X.Y = 2.glibcMinor: the tag is manylinux_2_<glibcMinor>_<arch>
	arch       string
	newest     libraryVersions
	also       []string // named versions allowed besides the numbered ones
}

func (p policy) tag() string { return "manylinux_2_" + strconv.Itoa(p.glibcMinor) + "_" + p.arch }

const (
	archX86  = "x86_64"
	archARM  = "aarch64"
	tmABI    = "CXXABI_TM_1"       // transactional memory support in libstdc++
	float128 = "CXXABI_FLOAT128"   // x86_64's __float128 type info
	dtRelr   = "GLIBC_ABI_DT_RELR" // glibc 2.36's packed relative relocations
)

// policies is ordered oldest glibc first: the first one a set of files
// satisfies is its tag.
var policies = []policy{
	{5, archX86, libraryVersions{"2.5", "3.4.8", "1.3.1", "4.2.0", ""}, nil},
	{12, archX86, libraryVersions{"2.12", "3.4.13", "1.3.3", "4.3.0", ""}, nil},
	{17, archX86, libraryVersions{"2.17", "3.4.19", "1.3.7", "4.8.0", ""}, []string{tmABI}},
	{17, archARM, libraryVersions{"2.18", "3.4.19", "1.3.7", "4.7.0", "1.0"}, []string{tmABI}},
	{24, archX86, libraryVersions{"2.24", "3.4.22", "1.3.10", "4.8.0", "1.2"}, []string{tmABI, float128}},
	{24, archARM, libraryVersions{"2.24", "3.4.22", "1.3.10", "4.7.0", "1.2"}, []string{tmABI}},
	{26, archX86, libraryVersions{"2.26", "3.4.22", "1.3.10", "4.8.0", "1.2"}, []string{tmABI, float128}},
	{26, archARM, libraryVersions{"2.26", "3.4.24", "1.3.11", "7.0.0", "1.2"}, []string{tmABI}},
	{27, archX86, libraryVersions{"2.27", "3.4.24", "1.3.11", "7.0.0", "1.2"}, []string{tmABI, float128}},
	{27, archARM, libraryVersions{"2.27", "3.4.24", "1.3.11", "7.0.0", "1.2"}, []string{tmABI}},
	{28, archX86, libraryVersions{"2.28", "3.4.24", "1.3.11", "7.0.0", "1.2"}, []string{tmABI, float128}},
	{28, archARM, libraryVersions{"2.28", "3.4.24", "1.3.11", "7.0.0", "1.2"}, []string{tmABI}},
	{31, archX86, libraryVersions{"2.31", "3.4.28", "1.3.12", "7.0.0", "1.2"}, []string{tmABI, float128}},
	{31, archARM, libraryVersions{"2.31", "3.4.28", "1.3.12", "7.0.0", "1.2"}, []string{tmABI}},
	{34, archX86, libraryVersions{"2.34", "3.4.29", "1.3.13", "7.0.0", "1.2"}, []string{tmABI, float128}},
	{34, archARM, libraryVersions{"2.34", "3.4.29", "1.3.13", "11.0", "1.2"}, []string{tmABI}},
	{35, archX86, libraryVersions{"2.35", "3.4.30", "1.3.13", "12.0.0", "1.2"}, []string{tmABI, float128}},
	{35, archARM, libraryVersions{"2.35", "3.4.30", "1.3.13", "11.0", "1.2"}, []string{tmABI}},
	{36, archX86, libraryVersions{"2.36", "3.4.30", "1.3.13", "12.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{36, archARM, libraryVersions{"2.36", "3.4.30", "1.3.13", "11.0", "1.2"}, []string{tmABI, dtRelr}},
	// glibc 2.37 added no symbol version, so its policy's newest is 2.36.
	{37, archX86, libraryVersions{"2.36", "3.4.30", "1.3.13", "12.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{37, archARM, libraryVersions{"2.36", "3.4.30", "1.3.13", "11.0", "1.2"}, []string{tmABI, dtRelr}},
	{38, archX86, libraryVersions{"2.38", "3.4.30", "1.3.13", "12.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{38, archARM, libraryVersions{"2.38", "3.4.30", "1.3.13", "11.0", "1.2"}, []string{tmABI, dtRelr}},
	{39, archX86, libraryVersions{"2.39", "3.4.33", "1.3.15", "14.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{39, archARM, libraryVersions{"2.39", "3.4.33", "1.3.15", "14.0", "1.2"}, []string{tmABI, dtRelr}},
	{40, archX86, libraryVersions{"2.40", "3.4.33", "1.3.15", "14.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{40, archARM, libraryVersions{"2.40", "3.4.33", "1.3.15", "14.0", "1.2"}, []string{tmABI, dtRelr}},
	{41, archX86, libraryVersions{"2.41", "3.4.33", "1.3.15", "14.0.0", "1.2"}, []string{tmABI, float128, dtRelr}},
	{41, archARM, libraryVersions{"2.41", "3.4.33", "1.3.15", "14.0", "1.2"}, []string{tmABI, dtRelr}},
}

// baseLibraries are the libraries every manylinux policy lets a file link
// (auditwheel's lib_whitelist), without libz.so.1: auditwheel allows it but
// forbids some of its symbols, which this table does not model, and
// nothing we ship links it.
var baseLibraries = []string{
	"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libanl.so.1",
	"libnsl.so.1", "libutil.so.1", "libresolv.so.2", "libstdc++.so.6", "libgcc_s.so.1",
	"libatomic.so.1", "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6",
	"libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
}

// policyLibraries is what policy p lets a file link: the base libraries,
// libexpat.so.1 from manylinux_2_12 and libmvec.so.1 from manylinux_2_24.
func policyLibraries(p policy) map[string]bool {
	libs := map[string]bool{}
	for _, l := range baseLibraries {
		libs[l] = true
	}
	if p.glibcMinor >= 12 {
		libs["libexpat.so.1"] = true
	}
	if p.glibcMinor >= 24 {
		libs["libmvec.so.1"] = true
	}
	return libs
}

// allowsVersion reports whether p allows a file to need the symbol version
// v (GLIBC_2.34, CXXABI_TM_1, ...). A prefix p does not limit is allowed,
// as auditwheel allows it.
func (p policy) allowsVersion(v string) bool {
	prefix, rest, _ := cutPrefix(v)
	for i, known := range versionPrefixes {
		if prefix != known {
			continue
		}
		for _, a := range p.also {
			if a == v {
				return true
			}
		}
		return p.newest[i] != "" && isDotted(rest) && compareDotted(rest, p.newest[i]) <= 0
	}
	return true
}
