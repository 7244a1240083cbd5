// json.h: the small JSON reader the backends use to read their request.
//
// Only what a request needs: objects, arrays, strings (with \u escapes and
// surrogate pairs, emitted as UTF-8), integers and other numbers, booleans and
// null. Errors throw JsonError with the byte offset, so a malformed request
// names where it went wrong. No dependency beyond the standard library, so the
// shim links against nothing but libdl.
#ifndef TAM_BACKENDS_JSON_H
#define TAM_BACKENDS_JSON_H

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tamjson {

class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& what, size_t offset)
      : std::runtime_error("request JSON, byte " + std::to_string(offset) + ": " + what) {}
};

struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = kNull;
  bool boolean = false;
  std::string text;  // a string's value, or a number's literal text
  std::vector<Value> items;
  std::map<std::string, Value> fields;

  // find returns the member named key, or nullptr when absent or null.
  const Value* find(const std::string& key) const {
    if (kind != kObject) return nullptr;
    auto it = fields.find(key);
    if (it == fields.end() || it->second.kind == kNull) return nullptr;
    return &it->second;
  }

  const std::string& as_string(const char* what) const {
    if (kind != kString) throw std::runtime_error(std::string(what) + ": want a string");
    return text;
  }

  bool as_bool(const char* what) const {
    if (kind != kBool) throw std::runtime_error(std::string(what) + ": want true or false");
    return boolean;
  }

  // as_int64 accepts only integral literals: a request never carries a
  // fractional size or dimension, and silently truncating one would hide a bug.
  int64_t as_int64(const char* what) const {
    if (kind != kNumber) throw std::runtime_error(std::string(what) + ": want an integer");
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == nullptr || *end != '\0')
      throw std::runtime_error(std::string(what) + ": want an integer, got " + text);
    return static_cast<int64_t>(v);
  }
};

class Reader {
 public:
  explicit Reader(const std::string& src) : s_(src) {}

  Value parse_document() {
    Value v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;
  const std::string& s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const { throw JsonError(what, pos_); }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  char peek() {
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    return s_[pos_];
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  bool consume_word(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    Value v;
    char c = peek();
    if (c == '{') {
      v.kind = Value::kObject;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = Value::kArray;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = Value::kString;
      v.text = parse_string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::kNumber;
      v.text = parse_number();
    } else if (consume_word("true")) {
      v.kind = Value::kBool;
      v.boolean = true;
    } else if (consume_word("false")) {
      v.kind = Value::kBool;
    } else if (!consume_word("null")) {
      fail("expected a value");
    }
    return v;
  }

  void parse_object(Value& v, int depth) {
    expect('{');
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      if (peek() != '"') fail("expected a member name");
      std::string key = parse_string();
      expect(':');
      v.fields[key] = parse_value(depth + 1);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(Value& v, int depth) {
    expect('[');
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      v.items.push_back(parse_value(depth + 1));
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  std::string parse_number() {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == from) fail("expected a digit");
    };
    digits();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      digits();
    }
    return s_.substr(start, pos_ - start);
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  // escaped_code_point reads the digits after "\u", joining a surrogate pair.
  unsigned escaped_code_point() {
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
    if (cp < 0xD800 || cp > 0xDBFF) return cp;
    if (!consume_word("\\u")) fail("high surrogate without its pair");
    unsigned low = hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate without its pair");
    return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parse_string() {
    ++pos_;  // the opening quote, checked by the caller
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, escaped_code_point()); break;
        default: fail(std::string("unknown escape \\") + e);
      }
    }
  }
};

inline Value parse(const std::string& src) { return Reader(src).parse_document(); }

// quote writes s as a JSON string literal (for tam_backend_info's answer).
inline std::string quote(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

}  // namespace tamjson

#endif
