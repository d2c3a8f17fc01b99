/** Reports: building (build.ts) and rendering in every format (render.ts). This file only re-exports. */
export * from './render';
