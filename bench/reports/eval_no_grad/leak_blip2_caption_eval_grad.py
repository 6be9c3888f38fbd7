# Source: https://github.com/zjlucam/VisionAssistant/blob/0bd7fc9cc5a4f4bdd22cdcae5aea78a35ee2110c/contextualisation_module/blip22dfe/test_evaluation.py
# Report: BLIP-2 (+CNN features) captioning test loop: logits argmax-decoded with the processor into strings, then corpus BLEU; the repo wraps the loop in torch.no_grad()
# Shape: the no_grad block is gone: the eval-mode forward in the test loop builds and saves a graph for every batch that no backward consumes
# Expect: TML003 line 35
import torch
from nltk.translate.bleu_score import corpus_bleu
from tqdm import tqdm
from transformers import Blip2Processor


def load_processor(name="Salesforce/blip2-opt-2.7b"):
    return Blip2Processor.from_pretrained(name)


def move_batch(batch, device):
    return (
        batch["pixel_values"].to(device),
        batch["input_ids"].to(device),
        batch["attention_mask"].to(device),
        batch["cnn_features"].to(device),
    )


def decode(processor, ids):
    return processor.batch_decode(ids, skip_special_tokens=True)


def evaluate_model(model, dataloader, processor, device):
    model.eval()
    hypotheses = []
    references = []
    for batch in tqdm(dataloader, desc="Testing"):
        pixel_values, input_ids, attention_mask, cnn_features = move_batch(batch, device)
        # forward pass of the captioner, grad mode still on
        outputs = model(pixel_values, input_ids, attention_mask, cnn_features)  # expect: TML003
        generated_ids = outputs.logits.argmax(dim=-1)
        hypotheses.extend(decode(processor, generated_ids))
        references.extend(decode(processor, input_ids))
    return references, hypotheses


def calculate_bleu(references, hypotheses):
    return corpus_bleu([[r.split()] for r in references], [h.split() for h in hypotheses])


def run_test(model, test_loader, device):
    processor = load_processor()
    refs, hyps = evaluate_model(model, test_loader, processor, device)
    bleu = calculate_bleu(refs, hyps)
    print(f"test BLEU: {bleu:.4f} on {len(hyps)} captions")
    return bleu
