"""The web server's settings (gunicorn), for scripts/run and production alike:
``gunicorn --config gunicorn.conf.py``. Options given on the command line or in
GUNICORN_CMD_ARGS win over these.

The worker class and counts were chosen with benchmarks/load.py (docs/operators.md gives the
figures): one process per core, each with threads, so that a request waiting on the
database or a file does not hold a core, and kept-alive connections are served.
"""

wsgi_app = "hctqa.wsgi"
worker_class = "gthread"
workers = 2
threads = 4
# One line per request on standard output (scripts/run keeps it in var/log/web.log).
accesslog = "-"
