#ifndef CLIBCURL_SHIM_H
#define CLIBCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per kind of argument the client passes.

typedef size_t (*clibcurl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*clibcurl_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                          curl_off_t upload_total, curl_off_t uploaded);

static inline CURLcode clibcurl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode clibcurl_set_data_callback(CURL *handle, CURLoption option, clibcurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode clibcurl_set_progress_callback(CURL *handle, clibcurl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode clibcurl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

#endif
