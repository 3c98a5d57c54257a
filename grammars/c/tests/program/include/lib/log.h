#ifndef LIB_LOG_H
#define LIB_LOG_H

void log_line(const char *msg);

#define LOG(msg) log_line(msg)

#endif
