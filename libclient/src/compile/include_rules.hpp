// compile/include_rules.hpp — which files a request's source and headers may include
// (DESIGN §9: headers come only from the request and the include roots).
//
// Contract: check_include_directives scans the source and every request header the way the
// preprocessor sees lines (backslash-newline joined, comments removed, `%:` as `#`) and fails
// with Errc::invalid_argument, naming the file and the directive, for
//  * an `#include`, `#include_next`, `#import` or `#embed` of an absolute path, of a path with
//    a `..` component or a `~`, or whose operand is not a literal `"name"` or `<name>` (a
//    computed include could name any file);
//  * `__has_include`/`__has_include_next`/`__has_embed` of such a path (an existence probe).
// Relative names pass: they resolve against request headers, the include roots and the
// compiler's own headers (the compile worker's working directory is empty, so nothing else).
// It is a first line only; the worker's confinement is what holds if a compiler ever reads
// more than the directives say.
#pragma once

#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache {

Status check_include_directives(const wire::GetRequest& request);

}  // namespace kcache
