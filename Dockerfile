# One image for web and workers. The GPU worker uses the same code; build it with
# TORCH_INDEX=https://download.pytorch.org/whl/cu128 (or similar) for CUDA wheels.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY requirements/ requirements/
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN pip install --index-url ${TORCH_INDEX} torch==2.13.0 \
 && pip install -c requirements/constraints.txt -r requirements/base.txt \
 && pip install --no-deps -r requirements/data.txt
COPY . .
RUN DJANGO_ENV=production SECRET_KEY=collectstatic-only DATABASE_URL=sqlite:////tmp/x.db \
    python manage.py collectstatic --noinput
EXPOSE 8000
# Workers, threads, preload and keep-alive: config/gunicorn.conf.py (the API bench uses it too).
CMD ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi:application"]
