// The console's stylesheet and script, from memory, cached for long (their URLs carry a content hash).
import type { FastifyInstance } from "fastify";
import { NotFoundError } from "../../core/shared/errors.ts";
import { assets } from "../views.ts";

export async function staticRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { name: string } }>(
    "/static/:name",
    { config: { consolePublic: true } },
    async (request, reply) => {
      const asset = Object.hasOwn(assets, request.params.name) ? assets[request.params.name] : undefined;
      if (!asset) throw new NotFoundError("no such file");
      return reply
        .type(asset.type)
        .header("Cache-Control", "public, max-age=31536000, immutable")
        .send(asset.body);
    },
  );
}
