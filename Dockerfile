# The citecheck Airflow image: the official Airflow 3.3 image plus this project's requirements.
#
# The code itself (dags/, plugins/, include/ with its SQL) is not copied in: docker-compose.yml mounts it,
# so an edit needs no rebuild. Rebuild when requirements.txt changes: `docker compose build`.
#
# torch: requirements.txt pins torch==2.13.0. From PyPI, a Linux x86_64 torch wheel is the CUDA build
# (several GB of nvidia-* wheels), so torch is installed FIRST from the index in TORCH_INDEX_URL:
# the CPU-only wheel index by default (`2.13.0+cpu` satisfies the `==2.13.0` pin, so the second
# `pip install -r requirements.txt` keeps it). For a GPU worker image build with
#   --build-arg TORCH_INDEX_URL=https://pypi.org/simple
# (PyPI's Linux wheel is the CUDA build) or with PyTorch's wheel index for your CUDA version;
# docker-compose.yml does this for the `airflow-worker-nli-gpu` service.
FROM apache/airflow:3.3.2-python3.11

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

# The model cache (HF_HOME) and /opt/airflow/data (files the CLI writes, e.g. the sample's recorded
# judge) are named volumes mounted here; creating the folders in the image makes the volumes start
# out owned by the airflow user and group-writable (the container may run with any AIRFLOW_UID,
# always with group 0).
ENV HF_HOME=/opt/airflow/hf-cache \
    PYTHONPATH=/opt/airflow/include
RUN mkdir -p "${HF_HOME}" /opt/airflow/data && chmod -R g+rwX "${HF_HOME}" /opt/airflow/data

COPY --chown=airflow:0 requirements.txt /opt/airflow/citecheck-requirements.txt

# apache-airflow is named again at the image's own version so pip can never up- or downgrade it.
RUN pip install --no-cache-dir "torch==2.13.0" --index-url "${TORCH_INDEX_URL}" \
 && pip install --no-cache-dir "apache-airflow==${AIRFLOW_VERSION}" -r /opt/airflow/citecheck-requirements.txt
