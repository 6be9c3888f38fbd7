# Source: https://github.com/thuanz123/enhancing-transformers/blob/main/enhancing/modules/stage2/layers.py
# Report: the ViT-VQGAN stage-2 GPT samples image tokens autoregressively for the image-logging callback; each step grows the sampled codes and logits with torch.cat([acc, new]) (sampling ran under no_grad: the callback's with torch.no_grad() and, since the #7 leak fix, @torch.no_grad() on CondTransformer.sample)
# Shape: no graph is kept (grad is off), but codes/logits are rebuilt by concatenation on every one of img_num_tokens steps: quadratic copying of a B x T x vocab tensor, peak twice the accumulator
# Expect: TML008 lines 48, 49
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from torch.cuda.amp import autocast


class GPT(nn.Module):
    def __init__(self, vocab_cond_size, vocab_img_size, embed_dim, cond_num_tokens, img_num_tokens, blocks):
        super().__init__()
        self.img_num_tokens = img_num_tokens
        self.tok_emb_cond = nn.Embedding(vocab_cond_size, embed_dim)
        self.pos_emb_cond = nn.Parameter(torch.zeros(1, cond_num_tokens, embed_dim))
        self.tok_emb_code = nn.Embedding(vocab_img_size, embed_dim)
        self.pos_emb_code = nn.Parameter(torch.zeros(1, img_num_tokens, embed_dim))
        self.blocks = nn.ModuleList(blocks)
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, vocab_img_size, bias=False)

    def sample(self, conds, top_k=None, softmax_temperature=1.0, use_fp16=True):
        past = codes = logits = None
        for i in range(self.img_num_tokens):
            if codes is None:
                codes_, pos_code = None, None
            else:
                codes_ = codes.clone().detach()[:, -1:]
                pos_code = self.pos_emb_code[:, i - 1:i, :]

            logits_, presents = self.sample_step(codes_, conds, pos_code, use_fp16, past)
            logits_ = logits_.to(dtype=torch.float32) / softmax_temperature

            presents = torch.stack(presents).clone().detach()
            if past is None:
                past = [presents]
            else:
                past.append(presents)

            if top_k is not None:
                v, _ = torch.topk(logits_, top_k)
                logits_[logits_ < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits_, dim=-1)

            idx = torch.multinomial(probs, num_samples=1).clone().detach()
            codes = idx if codes is None else torch.cat([codes, idx], axis=1)  # expect: TML008
            logits = logits_ if logits is None else torch.cat([logits, logits_], axis=1)  # expect: TML008
        del past
        return logits, codes

    def sample_step(self, codes, conds, pos_code, use_fp16=True, past=None):
        with autocast(enabled=use_fp16):
            presents = []
            if codes is None:
                x = self.tok_emb_cond(conds) + self.pos_emb_cond
                layer_pasts = [None] * len(self.blocks)
            else:
                x = self.tok_emb_code(codes) + pos_code
                layer_pasts = torch.cat(past, dim=-2)
            for block, layer_past in zip(self.blocks, layer_pasts):
                x, present = block.sample(x, layer_past=layer_past)
                presents.append(present)
            x = self.layer_norm(x)[:, -1].contiguous()
            return self.head(x), presents


class CondTransformer(pl.LightningModule):
    def __init__(self, cond_model, stage1_model, transformer, code_shape):
        super().__init__()
        self.cond_model = cond_model
        self.stage1_model = stage1_model
        self.transformer = transformer
        self.code_shape = code_shape

    @torch.no_grad()
    def sample(self, conds, top_k=None, softmax_temperature=1.0, use_fp16=True):
        conds = conds.view(conds.shape[0], -1)
        _, codes = self.transformer.sample(conds, top_k=top_k, softmax_temperature=softmax_temperature,
                                           use_fp16=use_fp16)
        codes = codes.view(codes.shape[0], *self.code_shape)
        return self.stage1_model.decode_codes(codes).clamp(0, 1)

    def log_images(self, batch, *args, **kwargs):
        conds = batch["class"].to(self.device)
        cond_codes = self.cond_model.encode_codes(conds).detach()
        return {"first samples": self.sample(cond_codes), "second samples": self.sample(cond_codes)}


class ImageLogger(pl.Callback):
    def __init__(self, batch_freq=1000):
        super().__init__()
        self.batch_freq = batch_freq

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if batch_idx % self.batch_freq != 0:
            return
        pl_module.eval()
        with torch.no_grad():
            images = pl_module.log_images(batch)
        images = {k: v.detach().cpu() for k, v in images.items()}
        trainer.logger.experiment.add_images("samples", images["first samples"], pl_module.global_step)
        pl_module.train()
