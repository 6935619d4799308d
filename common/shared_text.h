// SharedText: an immutable string whose copies share one buffer (a copy is a reference count,
// not the characters).
//
// Why: a scheduling pass tells thousands of queued jobs one text at once ("no free 4x4 block of
// hosts", the victim search's answer for a kind of job), and the text travels on from each job's
// record to the store batch, the store and the daemon's snapshot. As a std::string each of those
// was a copy of the characters (an allocation and a cache miss per job and per hop); shared, it
// is one text and a count.
//
// Reads like a const std::string (str(), the implicit conversion, empty(), ==); changed only by
// assigning a new text. Equal texts need not share a buffer: == compares the characters when the
// buffers differ.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace podsched {

class SharedText {
 public:
  SharedText() = default;  // ""
  // Explicit: a std::string or literal compares with a SharedText through string_view, and an
  // implicit conversion here would make that comparison ambiguous.
  explicit SharedText(std::string text)
      : text_(text.empty() ? nullptr : std::make_shared<const std::string>(std::move(text))) {}
  explicit SharedText(const char* text) : SharedText(std::string(text)) {}
  SharedText& operator=(std::string text) { return *this = SharedText(std::move(text)); }
  SharedText& operator=(const char* text) { return *this = SharedText(text); }

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as the string it is
  bool empty() const { return text_ == nullptr; }
  size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  bool starts_with(std::string_view prefix) const { return str().starts_with(prefix); }
  // Whether `other` is a copy of this text (one buffer), not only an equal one.
  bool Shares(const SharedText& other) const { return text_ != nullptr && text_ == other.text_; }

  friend bool operator==(const SharedText& a, const SharedText& b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::string operator+(const std::string& a, const SharedText& b) { return a + b.str(); }
  friend std::string operator+(const char* a, const SharedText& b) { return a + b.str(); }
  friend std::string operator+(const SharedText& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const SharedText& a, const char* b) { return a.str() + b; }
  friend std::ostream& operator<<(std::ostream& os, const SharedText& t) { return os << t.str(); }

 private:
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> text_;  // null: ""
};

}  // namespace podsched
