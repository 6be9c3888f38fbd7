# Source: https://openillumi.com/?p=74427
# Report: scoring sentence perplexity with several Hugging Face causal LMs one after another made GPU memory pile up until CUDA OOM; fix was to move each finished model off the GPU and drop the reference
# Shape: same helper, but each scored model is moved back to the CPU (model.cpu(), the article's first step) before it is kept for the demo
# Expect: near-miss: must be silent
import math

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def sentence_nll(model, tokenizer, sentence, device):
    enc = tokenizer(sentence, return_tensors="pt").to(device)
    out = model(**enc, labels=enc["input_ids"])
    return out.loss.item()


def compare_models(model_names, sentences, device="cuda"):
    table = {}
    loaded = []
    for name in model_names:
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16).to(device)
        model.eval()
        with torch.no_grad():
            nlls = [sentence_nll(model, tokenizer, s, device) for s in sentences]
        table[name] = {
            "ppl": [math.exp(n) for n in nlls],
            "mean_ppl": math.exp(sum(nlls) / len(nlls)),
        }
        print(f"{name}: mean perplexity {table[name]['mean_ppl']:.2f}")
        # park the finished checkpoint in host memory; only the winner
        # goes back to the GPU for the demo
        loaded.append((name, tokenizer, model.cpu()))
    best = min(table, key=lambda k: table[k]["mean_ppl"])
    return table, best, loaded


def demo_best(loaded, best, prompt, device="cuda"):
    for name, tokenizer, model in loaded:
        if name == best:
            model.to(device)
            ids = tokenizer(prompt, return_tensors="pt").to(device)
            with torch.no_grad():
                gen = model.generate(**ids, max_new_tokens=30)
            return tokenizer.decode(gen[0], skip_special_tokens=True)
    return None


if __name__ == "__main__":
    names = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]
    sents = ["The cat sat on the mat.", "Colorless green ideas sleep furiously."]
    scores, winner, models = compare_models(names, sents)
    print(demo_best(models, winner, "Once upon a time"))
