/* core/error.c - error names, descriptions and the berth_error record. */
#include "berth/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *berth_err_name(int code)
{
    switch (code) {
#define BERTH_X_NAME(sym, val, name, desc, exitc) case val: return name;
    BERTH_ERROR_LIST(BERTH_X_NAME)
#undef BERTH_X_NAME
    }
    return "EUNKNOWN";
}

const char *berth_strerror(int code)
{
    switch (code) {
#define BERTH_X_DESC(sym, val, name, desc, exitc) case val: return desc;
    BERTH_ERROR_LIST(BERTH_X_DESC)
#undef BERTH_X_DESC
    }
    return "unknown error";
}

int berth_err_exit_code(int code)
{
    switch (code) {
#define BERTH_X_EXIT(sym, val, name, desc, exitc) case val: return exitc;
    BERTH_ERROR_LIST(BERTH_X_EXIT)
#undef BERTH_X_EXIT
    }
    return 3;
}

int berth_error_set(berth_error *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

void berth_error_clear(berth_error *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}
