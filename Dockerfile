# One image for web and workers. The GPU worker uses the same code; build it with
# TORCH_INDEX=https://download.pytorch.org/whl/cu128 (or similar) for CUDA wheels.
# The build context is an allow-list (.dockerignore): no .venv, var/, .env or
# node_modules reaches the image. tests/unit/test_image.py checks both files.

# The single-page app: only its build output, dist/, goes into the image.
FROM node:20.20-bookworm-slim AS frontend
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim
# Static files are collected into the image at build time, outside the /data volume:
# a named volume is filled from the image only when it is created, so static files on
# it would go stale at the next upgrade.
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    FFKV_DATA_DIR=/data STATIC_ROOT=/app/static
# The processes run as ffkv, who may write the data folder but not the code.
RUN useradd --create-home --uid 10001 --user-group --shell /usr/sbin/nologin ffkv \
 && install -d -o ffkv -g ffkv -m 0750 /data
WORKDIR /app
COPY requirements/ requirements/
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN pip install --index-url ${TORCH_INDEX} torch==2.13.0 \
 && pip install -c requirements/constraints.txt -r requirements/base.txt \
 && pip install --no-deps -r requirements/data.txt
COPY . .
COPY --from=frontend /frontend/dist frontend/dist
# Settings only: nothing connects to the database or the broker here.
RUN DJANGO_ENV=production SECRET_KEY=collectstatic-only DATABASE_URL=sqlite:////tmp/collectstatic.db \
    CELERY_BROKER_URL=memory:// CACHE_URL=redis://collectstatic.invalid:6379/0 python manage.py collectstatic --noinput \
 && python -m compileall -q manage.py config annotate mining reports
USER ffkv
EXPOSE 8000
# Workers, threads, preload and keep-alive: config/gunicorn.conf.py (the API bench uses it too).
CMD ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi:application"]
