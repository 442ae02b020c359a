// Implements http_post with one libcurl easy handle per call.
#include "adapters/llm/http.hpp"

#include <algorithm>
#include <cctype>
#include <curl/curl.h>
#include <fmt/core.h>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace kj::llm {
namespace {

// curl_global_init is not thread-safe: run it once, before the first handle of any thread.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw std::runtime_error("libcurl: curl_global_init failed");
  });
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<http_response*>(user)->body.append(data, size * count);
  return size * count;
}

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* response = static_cast<http_response*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) response->headers.clear(); // a new response (after 100 Continue, ...)
  const std::size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    response->headers[name] = trim(line.substr(colon + 1));
  }
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancelled = static_cast<const std::function<bool()>*>(user);
  return (*cancelled && (*cancelled)()) ? 1 : 0; // non-zero aborts the transfer
}

struct curl_deleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct slist_deleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

} // namespace

std::string http_response::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

http_response http_post(const http_request& request) {
  init_curl_once();
  http_response response;
  std::unique_ptr<CURL, curl_deleter> handle(curl_easy_init());
  if (!handle) {
    response.transport_error = "libcurl could not create a handle";
    return response;
  }
  std::unique_ptr<curl_slist, slist_deleter> headers;
  for (const std::string& h : request.headers)
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  // Without this curl waits up to a second for "100 Continue" before sending a large body.
  headers.reset(curl_slist_append(headers.release(), "Expect:"));
  char error_text[CURL_ERROR_SIZE] = {};
  CURL* h = handle.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // whatever this libcurl can decode
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &request.cancelled);

  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  double seconds = 0;
  curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &seconds);
  response.elapsed_ms = seconds * 1000.0;
  if (code == CURLE_OK) {
    response.status = status;
    return response;
  }
  response.status = 0; // an incomplete response is no response: its status must not be acted on
  response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
  response.truncated = code == CURLE_PARTIAL_FILE;
  response.aborted = code == CURLE_ABORTED_BY_CALLBACK;
  const std::string detail = error_text[0] ? error_text : curl_easy_strerror(code);
  if (response.timed_out)
    response.transport_error =
        fmt::format("timed out (connect limit {:.1f} s, whole request {:.1f} s): {}",
                    request.connect_timeout.count() / 1000.0, request.total_timeout.count() / 1000.0, detail);
  else if (response.truncated)
    response.transport_error = fmt::format("the response body was cut off ({})", detail);
  else if (response.aborted)
    response.transport_error = "cancelled";
  else
    response.transport_error = detail;
  return response;
}

} // namespace kj::llm
