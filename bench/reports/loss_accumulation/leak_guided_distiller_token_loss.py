# Source: https://github.com/irlfarmer/guided_llm_distiller/blob/4fbc2986635ec4a722ebd9fbc8253389b390a70f/distiller.py
# Report: one edit from the repository's code: the running per-token total keeps the loss tensor instead of loss.item()
# Shape: total_loss (bound before both loops) += loss * batch_tokens keeps every step's loss tensor alive and chains them; batch_loss stays the intended per-batch sum
# Expect: TML001 line 62
import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenKLLoss(nn.Module):
    def __init__(self, temperature=2.0, eps=1e-8):
        super().__init__()
        self.temperature = temperature
        self.eps = eps
        self.kl = nn.KLDivLoss(reduction="sum")

    def forward(self, student_logits, teacher_logits, mask):
        s = F.log_softmax(student_logits / self.temperature, dim=-1)
        t = F.softmax(teacher_logits / self.temperature, dim=-1).clamp(min=self.eps)
        return self.kl(s, t) / (mask.sum() + self.eps)


def distill(student, teacher, tok, samples, epochs=3, batch_size=8):
    kd_loss = TokenKLLoss(temperature=2.0)
    optimizer = torch.optim.AdamW(student.parameters(), lr=5e-5)
    student.train()
    teacher.eval()
    seen_tokens = 0
    total_loss = 0.0
    for epoch in range(epochs):
        for start in range(0, len(samples), batch_size):
            chunk = samples[start:start + batch_size]
            full = [f"Question: {s['q']}\nAnswer: {s['teacher']}" for s in chunk]
            prompts = [f"Question: {s['q']}\nAnswer:" for s in chunk]
            enc = tok(full, return_tensors="pt", padding=True, truncation=True).to("cuda")
            penc = tok(prompts, return_tensors="pt", padding=True, truncation=True)
            plens = penc.input_ids.ne(tok.pad_token_id).sum(dim=1)

            with torch.no_grad():
                t_logits = teacher(**enc).logits
            s_logits = student(**enc).logits

            batch_loss = 0.0
            batch_tokens = 0
            for j in range(len(chunk)):
                p = plens[j].item()
                if p >= s_logits[j].shape[0]:
                    continue
                s_part = s_logits[j, p:, :]
                t_part = t_logits[j, p:, :]
                mask = torch.ones(s_part.shape[0], device=s_part.device)
                batch_loss += kd_loss(s_part, t_part, mask)
                batch_tokens += s_part.shape[0]
            if batch_tokens == 0:
                continue

            loss = batch_loss / (batch_tokens + 1e-8)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            total_loss += loss * batch_tokens  # expect: TML001
            seen_tokens += batch_tokens
        print(f"epoch {epoch + 1}: loss/token {total_loss / (seen_tokens + 1e-8):.4f}")
