# Source: https://github.com/X-niper/UniTalker/pull/7
# Report: demo.py ran out of GPU memory once many audio files were processed, because every predicted vertex sequence was stored in out_dict while still on the GPU; the fix was storing out.cpu().
# Shape: inference runs under torch.no_grad(), but the per-file, per-dataset vertex tensors produced on cuda are written into a nested results dict that lives until np.savez at the very end.
# Expect: TML004 line 45
import os

import numpy as np
import torch


def merge_chunks(chunks, fps, overlap_s=5):
    if len(chunks) == 1:
        return chunks[0]
    b = overlap_s * fps
    merged = chunks[0]
    for piece in chunks[1:]:
        w = np.linspace(1, 0, b)[:, None]
        merged[-b:] = w * merged[-b:] + (1 - w) * piece[:b]
        merged = np.concatenate([merged, piece[b:]], axis=0)
    return merged


def run_demo(model, loss_module, processor, wav_files, wav_dir, dataset_cfg, out_path):
    model.eval().cuda()
    out_dict = {}
    with torch.no_grad():
        for wav_f in wav_files:
            out_dict[wav_f] = {}
            audio = processor.load(os.path.join(wav_dir, wav_f))
            splits = processor.split_long_audio(audio)
            for dataset_name, cfg in dataset_cfg.items():
                template = cfg["scale"] * cfg["template"].cuda()
                style = cfg["condition_id"].cuda()
                fps = 25 if cfg["annot_type"] == "BIWI_23370_vertices" else 30
                chunks = []
                for piece in splits:
                    piece = torch.as_tensor(piece[None], dtype=torch.float32).cuda()
                    out, _, _ = model(piece, template, face_motion=None,
                                      style_idx=style, annot_type=cfg["annot_type"],
                                      fps=fps)
                    chunks.append(out.cpu().numpy().squeeze(0))
                merged = merge_chunks(chunks, fps)
                verts = loss_module.get_vertices(torch.from_numpy(merged).cuda(),
                                                 cfg["annot_type"])
                out_dict[wav_f][dataset_name] = verts  # expect: TML004
    print(f"save results to {out_path}")
    np.savez(out_path, **out_dict)
