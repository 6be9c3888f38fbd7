# Source: https://github.com/atomantic/PortOS/blob/2f989b612fb4247abdc5d1139cae44f290cfe4f5/scripts/train_flux2_lora.py
# Report: FLUX.2 LoRA trainer after the fix of PR #3598: encoders frozen with requires_grad_(False) and the whole precompute phase under torch.no_grad()
# Shape: the same embed_cache dict and examples list are filled, but every encode runs under no_grad (and the encoders no longer require grad), so the cached .to("cpu") copies are plain CPU tensors
# Expect: near-miss: must be silent
import contextlib
import gc

import torch
from diffusers import Flux2KleinPipeline
from peft import LoraConfig
from PIL import Image
import numpy as np


def log(msg):
    print(msg, flush=True)


@contextlib.contextmanager
def heartbeat(stage):
    log(f"STATUS:{stage} started")
    yield
    log(f"STATUS:{stage} done")


def load_image_tensor(path, resolution):
    img = Image.open(path).convert("RGB").resize((resolution, resolution))
    arr = np.asarray(img, dtype=np.float32) / 127.5 - 1.0
    return torch.from_numpy(arr).permute(2, 0, 1).unsqueeze(0)


def main(args, images, device="cuda"):
    dtype = torch.bfloat16
    pipe = Flux2KleinPipeline.from_pretrained(args.model_repo, torch_dtype=dtype)
    # nothing is trainable until the LoRA is added below
    pipe.text_encoder.requires_grad_(False)
    pipe.vae.requires_grad_(False)
    pipe.transformer.requires_grad_(False)

    # ---- Phase 1: precompute text embeddings + image latents ----
    log("STAGE:precompute-latents")
    sample_prompt = args.sample_prompt or f"{args.trigger_word} portrait, neutral background"
    examples = []
    with torch.no_grad(), heartbeat("precompute-latents"):
        pipe.text_encoder.to(device)
        embed_cache = {}
        for entry in images + [{"caption": sample_prompt, "path": None}]:
            caption = entry["caption"]
            if caption not in embed_cache:
                embeds, text_ids = pipe.encode_prompt(caption, device=device)
                embed_cache[caption] = (embeds.to("cpu"), text_ids.to("cpu"))
        sample_embeds = embed_cache[sample_prompt]
        pipe.text_encoder.to("cpu")
        pipe.text_encoder = None
        gc.collect()

        pipe.vae.to(device)
        gen = torch.Generator(device="cpu").manual_seed(args.seed)
        for i, entry in enumerate(images):
            pixel = load_image_tensor(entry["path"], args.resolution).to(device, pipe.vae.dtype)
            latents = pipe._encode_vae_image(pixel, generator=gen)
            packed = pipe._pack_latents(latents)
            embeds, text_ids = embed_cache[entry["caption"]]
            examples.append({"packed": packed.to("cpu"), "embeds": embeds, "text_ids": text_ids})
            log(f"STATUS:encoded {i + 1}/{len(images)} dataset images")
        pipe.vae.to("cpu")
        gc.collect()

    # ---- Phase 2: training (LoRA on the transformer) ----
    transformer = pipe.transformer
    transformer.requires_grad_(False)
    transformer.add_adapter(LoraConfig(r=args.rank, lora_alpha=args.rank, init_lora_weights="gaussian",
                                       target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    transformer.to(device)
    transformer.train()
    trainable = [p for p in transformer.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)

    final_loss = None
    for step in range(1, args.steps + 1):
        ex = examples[(step - 1) % len(examples)]
        packed = ex["packed"].to(device, dtype)
        embeds = ex["embeds"].to(device, dtype)
        noise = torch.randn_like(packed)
        sigma = torch.sigmoid(torch.randn((1,))).to(device, dtype)
        noisy = (1.0 - sigma) * packed + sigma * noise
        pred = transformer(hidden_states=noisy, timestep=sigma.expand(1), encoder_hidden_states=embeds,
                           txt_ids=ex["text_ids"].to(device), return_dict=False)[0]
        loss = torch.nn.functional.mse_loss(pred.float(), (noise - packed).float())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        final_loss = float(loss.detach().item())
        log(f"STEP:{step}:{args.steps}:{final_loss:.4f}")
    return final_loss, sample_embeds
