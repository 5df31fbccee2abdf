# Multi-stage: build the binaries and the default table set, then a slim runtime image.
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p shogi4-cli -p shogi4-server \
 && ./target/release/shogi4 solve --all --max-pieces 3 --out /tables \
 && ./target/release/shogi4 audit /tables \
 && mkdir -p /tables/certificates && cp tables/certificates/*.s4cert /tables/certificates/ \
 && cp tables/opening.proofs /tables/ \
 && ./target/release/shogi4 probe 'trfk/3c/C3/KFRT b - 1' --tables /tables --search-ms 1 >/dev/null \
 && test -f /tables/certificates/.checked/start.s4cert.index

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home shogi4 \
 && mkdir -p /var/lib/shogi4 && chown shogi4 /var/lib/shogi4
COPY --from=build /src/target/release/shogi4 /src/target/release/shogi4-server /usr/local/bin/
COPY --from=build --chown=shogi4 /tables /tables
USER shogi4
# The proof store lives apart from the tables, so the tables can be mounted read-only.
ENV SHOGI4_BIND=0.0.0.0:8080 SHOGI4_TABLES=/tables SHOGI4_NO_SOLVE=true SHOGI4_LOG_FORMAT=json \
    SHOGI4_PROOF_STORE=/var/lib/shogi4/proofs.redb
VOLUME /var/lib/shogi4
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s \
  CMD curl -fsS http://127.0.0.1:8080/health || exit 1
ENTRYPOINT ["shogi4-server"]
