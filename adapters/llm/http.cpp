// Implements http_post with one libcurl easy handle per call.
#include "adapters/llm/http.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
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

using steady = std::chrono::steady_clock;

// What the callbacks of one transfer share.
struct transfer {
  const http_request* request = nullptr;
  http_response* response = nullptr;
  CURL* handle = nullptr;
  enum class sink { undecided, buffer, stream } mode = sink::undecided;
  steady::time_point last_byte = steady::now();
  bool idle_expired = false;
};

// A 2xx answer of type text/event-stream goes to on_stream when the caller asked for one.
transfer::sink decide(transfer& t) {
  if (!t.request->on_stream) return transfer::sink::buffer;
  long status = 0;
  curl_easy_getinfo(t.handle, CURLINFO_RESPONSE_CODE, &status);
  const bool event_stream = t.response->header("content-type").rfind("text/event-stream", 0) == 0;
  return status >= 200 && status < 300 && event_stream ? transfer::sink::stream : transfer::sink::buffer;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<transfer*>(user);
  t.last_byte = steady::now();
  if (t.mode == transfer::sink::undecided) t.mode = decide(t);
  if (t.mode == transfer::sink::buffer) {
    t.response->body.append(data, size * count);
    return size * count;
  }
  t.response->streamed = true;
  if (t.request->on_stream(std::string_view(data, size * count))) return size * count;
  t.response->stream_stopped = true;
  return 0; // aborts the transfer
}

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<transfer*>(user);
  t.last_byte = steady::now();
  http_response* response = t.response;
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

// Called about once a second even when nothing arrives: Ctrl-C and the idle limit. Non-zero aborts.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto& t = *static_cast<transfer*>(user);
  if (t.request->cancelled && t.request->cancelled()) return 1;
  const auto idle = t.request->idle_timeout;
  if (idle.count() > 0 && steady::now() - t.last_byte > idle) {
    t.idle_expired = true;
    return 1;
  }
  return 0;
}

struct curl_deleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct slist_deleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct mime_deleter {
  void operator()(curl_mime* mime) const { curl_mime_free(mime); }
};

// The multipart body of a form (libcurl's MIME API); null when the request has none.
std::unique_ptr<curl_mime, mime_deleter> form_of(CURL* h, const http_request& request) {
  if (request.form.empty()) return nullptr;
  std::unique_ptr<curl_mime, mime_deleter> mime(curl_mime_init(h));
  for (const form_part& f : request.form) {
    curl_mimepart* part = curl_mime_addpart(mime.get());
    curl_mime_name(part, f.name.c_str());
    curl_mime_data(part, f.data.data(), f.data.size());
    if (!f.file_name.empty()) curl_mime_filename(part, f.file_name.c_str());
    if (!f.content_type.empty()) curl_mime_type(part, f.content_type.c_str());
  }
  curl_easy_setopt(h, CURLOPT_MIMEPOST, mime.get());
  return mime;
}

void set_options(CURL* h, const http_request& request, curl_slist* headers, transfer& t, char* error_text) {
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.form.empty()) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  // Long generations keep a connection open and silent for minutes: keep-alive probes stop NATs and load
  // balancers from dropping it.
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); // whatever this libcurl can decode
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
}

void describe_failure(CURLcode code, const transfer& t, const char* error_text, http_response& response) {
  const http_request& request = *t.request;
  response.status = 0; // an incomplete response is no response: its status must not be acted on
  response.timed_out = code == CURLE_OPERATION_TIMEDOUT || t.idle_expired;
  response.truncated = code == CURLE_PARTIAL_FILE;
  response.aborted = code == CURLE_ABORTED_BY_CALLBACK && !t.idle_expired;
  const std::string detail = error_text[0] ? error_text : curl_easy_strerror(code);
  if (t.idle_expired)
    response.transport_error = fmt::format("timed out: nothing arrived for {:.1f} s (the idle limit)",
                                           request.idle_timeout.count() / 1000.0);
  else if (response.timed_out)
    response.transport_error =
        fmt::format("timed out (connect limit {:.1f} s, whole request {:.1f} s): {}",
                    request.connect_timeout.count() / 1000.0, request.total_timeout.count() / 1000.0, detail);
  else if (response.truncated)
    response.transport_error = fmt::format("the response body was cut off ({})", detail);
  else if (response.aborted)
    response.transport_error = "cancelled";
  else if (response.stream_stopped)
    response.transport_error = "the stream was stopped by its reader";
  else
    response.transport_error = detail;
}

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
  transfer t{&request, &response, h};
  set_options(h, request, headers.get(), t, error_text);
  const auto form = form_of(h, request);

  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  double seconds = 0;
  curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &seconds);
  curl_off_t uploaded = 0;
  curl_easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  response.request_sent = status != 0 || static_cast<std::size_t>(uploaded) >= request.body.size();
  response.elapsed_ms = seconds * 1000.0;
  if (code == CURLE_OK) {
    response.status = status;
    return response;
  }
  describe_failure(code, t, error_text, response);
  return response;
}

} // namespace kj::llm
