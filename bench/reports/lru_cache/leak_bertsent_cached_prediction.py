# Source: https://github.com/abhishekkrthakur/bert-sentiment/blob/master/src/app.py
# Report: Flask sentiment API around a fine-tuned BERT memoises sentence_prediction() so repeated sentences skip the model; here the memo is functools.lru_cache and the function returns the sigmoid tensor, leaving .item() to the route
# Shape: lru_cache keeps up to 1024 returned CUDA tensors (one per distinct sentence) alive for the life of the server process; nothing ever evicts them except newer sentences
# Expect: TML012 line 46
import functools
import time

import flask
import torch
import torch.nn as nn
import transformers
from flask import Flask, request

DEVICE = "cuda"
MAX_LEN = 512
TOKENIZER = transformers.BertTokenizer.from_pretrained("bert-base-uncased", do_lower_case=True)

app = Flask(__name__)
MODEL = None


class BertBaseUncased(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = transformers.BertModel.from_pretrained("bert-base-uncased")
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(768, 1)

    def forward(self, ids, mask, token_type_ids):
        pooled = self.bert(ids, attention_mask=mask, token_type_ids=token_type_ids).pooler_output
        return self.out(self.drop(pooled))


def encode(sentence):
    review = " ".join(str(sentence).split())
    enc = TOKENIZER.encode_plus(review, None, add_special_tokens=True,
                                max_length=MAX_LEN, truncation=True)
    pad = MAX_LEN - len(enc["input_ids"])
    ids = enc["input_ids"] + [0] * pad
    mask = enc["attention_mask"] + [0] * pad
    token_type_ids = enc["token_type_ids"] + [0] * pad
    return [torch.tensor(x, dtype=torch.long).unsqueeze(0).to(DEVICE)
            for x in (ids, mask, token_type_ids)]


@functools.lru_cache(maxsize=1024)  # expect: TML012
def sentence_prediction(sentence):
    ids, mask, token_type_ids = encode(sentence)
    with torch.no_grad():
        outputs = MODEL(ids=ids, mask=mask, token_type_ids=token_type_ids)
    return torch.sigmoid(outputs)[0, 0]


@app.route("/predict")
def predict():
    sentence = request.args.get("sentence")
    start = time.time()
    positive = sentence_prediction(sentence).item()
    return flask.jsonify({"response": {
        "positive": str(positive),
        "negative": str(1 - positive),
        "sentence": str(sentence),
        "time_taken": str(time.time() - start),
    }})


if __name__ == "__main__":
    MODEL = BertBaseUncased()
    MODEL.load_state_dict(torch.load("model.bin", map_location=DEVICE))
    MODEL.to(DEVICE)
    MODEL.eval()
    app.run()
