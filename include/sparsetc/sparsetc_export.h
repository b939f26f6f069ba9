/* sparsetc: symbol visibility. The library is built with hidden visibility and a linker version
 * script; only declarations marked SPARSETC_API are exported. */
#ifndef SPARSETC_EXPORT_H
#define SPARSETC_EXPORT_H

#if defined(SPARSETC_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define SPARSETC_API __attribute__((visibility("default")))
#else
#define SPARSETC_API
#endif

#endif /* SPARSETC_EXPORT_H */
